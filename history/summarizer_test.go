package history_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// summaryTokens is what each summary reply of summaryModel reports.
const summaryTokens = 7

// summaryModel plays the model of a long conversation (each user message
// asks for a city's report: the model calls get_report, then answers) and
// the writer of summaries, which names the cities its transcript mentions.
// It records the transcripts it was asked to summarize.
type summaryModel struct {
	mu          sync.Mutex
	transcripts []string
	fail        bool // summary calls fail with a 400
}

func (m *summaryModel) reply(r *fake.Request) *fake.Reply {
	first := r.Contents[0].Parts[0].Text
	if strings.HasPrefix(first, history.DefaultSummaryInstruction) {
		m.mu.Lock()
		m.transcripts = append(m.transcripts, first)
		fail := m.fail
		m.mu.Unlock()
		if fail {
			return fake.Error(400, "summary refused")
		}
		var cities []string
		for _, w := range strings.Fields(first) {
			if c := strings.Trim(w, `"{}():,?.`); strings.HasPrefix(c, "city-") && !slices.Contains(cities, c) {
				cities = append(cities, c)
			}
		}
		reply := fake.Text("The user read the reports on " + strings.Join(cities, ", ") + ".")
		reply.Response.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount: summaryTokens - 2, CandidatesTokenCount: 2, TotalTokenCount: summaryTokens}
		return reply
	}
	last := r.Contents[len(r.Contents)-1]
	if last.Parts[0].FunctionResponse != nil {
		return fake.Text("Read it.")
	}
	city := strings.TrimPrefix(last.Parts[0].Text, "Report on ")
	return fake.Calls(fake.Call("get_report", map[string]any{"city": city}))
}

// names reports whether text names city: "city-1", not "city-10".
func names(text, city string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(city) + `\b`).MatchString(text)
}

func (m *summaryModel) asked() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.transcripts...)
}

// A long conversation kept in a session store, with a Summarizer: every
// run fits the fake's limit, every request past the first trim carries one
// summary, which names the cities of the exchanges it replaced, and the
// summary calls are counted apart from the runs.
func TestSummarizerLongConversation(t *testing.T) {
	const turns = 60
	srv := longServer(t)
	m := &summaryModel{}
	srv.SetReplyFunc(m.reply)
	sum := &history.Summarizer{Trimmer: history.Trimmer{MaxTokens: trimAt}, Models: srv.Client().Models}
	a := longAgent(t, srv, sum.Prepare)
	store := session.NewMemory()
	var runTokens int
	for i := range turns {
		res, err := session.Run(ctx, a, store, "long", genai.Text(fmt.Sprint("Report on city-", i))...)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		runTokens += res.Usage.TotalTokens
		req := srv.LastRequest()
		if first := req.Contents[0].Parts[0].Text; first != "Report on city-0" {
			t.Fatalf("turn %d: the first message is gone: %q", i, first)
		}
		if len(m.asked()) == 0 {
			continue
		}
		var summaries []string
		for _, c := range req.Contents {
			if text := c.Parts[0].Text; strings.HasPrefix(text, history.SummaryPrefix) {
				summaries = append(summaries, text)
			}
		}
		if len(summaries) != 1 {
			t.Fatalf("turn %d: the request carries %d summaries; want 1", i, len(summaries))
		}
		// Nothing is forgotten: each city is in the request, or in the
		// summary of what was dropped.
		for j := 0; j <= i; j++ {
			city := fmt.Sprint("city-", j)
			if !names(summaries[0], city) && !slices.ContainsFunc(req.Contents, func(c *genai.Content) bool {
				return c.Parts[0].Text == "Report on "+city
			}) {
				t.Fatalf("turn %d: %s is neither in the request nor in its summary %q", i, city, summaries[0])
			}
		}
	}
	if rej := srv.Rejections(); len(rej) > 0 {
		t.Fatalf("the fake refused %d requests: %s", len(rej), rej[0].Err.Message)
	}
	st := sum.Stats()
	if st.Summaries == 0 || st.Failed != 0 || st.Summaries != len(m.asked()) {
		t.Fatalf("Stats() = %+v after %d summary calls; want every call a summary", st, len(m.asked()))
	}
	if st.Usage.TotalTokens != summaryTokens*st.Summaries {
		t.Errorf("Stats().Usage = %d tokens; want %d for %d summaries", st.Usage.TotalTokens, summaryTokens*st.Summaries, st.Summaries)
	}
	// The transcript of a summary call is text: no function call or
	// response goes to the summary call, and the first message stays out.
	for _, tr := range m.asked() {
		if strings.Contains(tr, "User: Report on city-0\n") {
			t.Errorf("the first message, which stays, was summarized:\n%s", tr)
		}
	}
	stored, err := store.Load(ctx, "long")
	if err != nil || len(stored) != turns*4 {
		t.Fatalf("stored %d contents, %v; want the whole conversation, %d", len(stored), err, turns*4)
	}
	// Each run resumes the conversation from the store and drops a little
	// more than the one before: it summarizes the earlier summary and what
	// it drops beyond, not the whole past again.
	transcripts := 0
	for k, tr := range m.asked() {
		transcripts += len(tr)
		if k > 0 && !strings.Contains(tr, "\n\nUser: "+history.SummaryPrefix) {
			t.Errorf("summary call %d does not start from the earlier summary:\n%.300s", k+1, tr)
		}
	}
	t.Logf("%d turns: %d summaries (%d reused), %d tokens of summary calls, %d bytes of transcripts in all, %d tokens of runs",
		turns, st.Summaries, st.Reused, st.Usage.TotalTokens, transcripts, runTokens)
}

// bigHistory returns exchanges about cities from to to-1, each a user
// message, a signed call of get_weather, its large answer and a text.
func bigHistory(from, to int) []*genai.Content {
	var cs []*genai.Content
	for i := from; i < to; i++ {
		city := fmt.Sprint("city-", i)
		cs = append(cs, userText("Weather in "+city+"?"))
		cs = append(cs, step([]byte("sig"), bigOutput(3000), city)...)
		cs = append(cs, modelText("Sunny in "+city+".", nil))
	}
	return cs
}

// A later trim summarizes the earlier summary with what it drops: the run
// carries one summary, rolling forward.
func TestSummarizerRollsTheSummaryForward(t *testing.T) {
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	m := &summaryModel{}
	srv.SetReplyFunc(m.reply)
	sum := &history.Summarizer{Trimmer: history.Trimmer{MaxTokens: 8000, ToolOutputBytes: 1 << 20, DropFirstMessage: true},
		Models: srv.Client().Models}

	out, err := sum.Prepare(ctx, info(bigHistory(0, 10)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out[0].Parts[0].Text, history.SummaryPrefix) || !names(out[0].Parts[0].Text, "city-0") {
		t.Fatalf("the first trim's history begins with %q; want a summary naming city-0", out[0].Parts[0].Text)
	}
	// The same trim again (a run that retries, or resumes the same
	// conversation) sends the summary written before, with no call.
	again, err := sum.Prepare(ctx, info(bigHistory(0, 10)))
	if err != nil || again[0].Parts[0].Text != out[0].Parts[0].Text || len(m.asked()) != 1 || sum.Stats().Reused != 1 {
		t.Fatalf("the same trim again: %v, %d summary calls, Stats() = %+v; want the same summary, reused", err, len(m.asked()), sum.Stats())
	}
	more := append(append([]*genai.Content(nil), out...), bigHistory(10, 16)...)
	out2, err := sum.Prepare(ctx, info(more))
	if err != nil {
		t.Fatal(err)
	}
	asked := m.asked()
	if len(asked) != 2 || !strings.Contains(asked[1], "User: "+history.SummaryPrefix) {
		t.Fatalf("the second summary call's transcript does not hold the first summary:\n%v", asked)
	}
	text := out2[0].Parts[0].Text
	if !strings.HasPrefix(text, history.SummaryPrefix) || !names(text, "city-0") {
		t.Errorf("the second trim's summary = %q; want one naming city-0 (from the first summary)", text)
	}
	for i := range 16 { // every city dropped is in the summary
		city := fmt.Sprint("city-", i)
		if !slices.ContainsFunc(out2, func(c *genai.Content) bool { return c.Parts[0].Text == "Weather in "+city+"?" }) && !names(text, city) {
			t.Errorf("the second trim's summary = %q; want one naming %s, which it dropped", text, city)
		}
	}
	for _, c := range out2[1:] {
		if strings.HasPrefix(c.Parts[0].Text, history.SummaryPrefix) {
			t.Errorf("the second trim kept the first summary as well")
		}
	}
	if history.Estimate(out2...) > 8000 {
		t.Errorf("after the second trim: %d tokens; want at most 8000", history.Estimate(out2...))
	}
}

// A summary call that fails leaves the trim as a Trimmer's: the exchanges
// are dropped without a summary, the failure is counted and logged, and
// the history is usable.
func TestSummarizerFailureDropsWithoutSummary(t *testing.T) {
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	m := &summaryModel{fail: true}
	srv.SetReplyFunc(m.reply)
	var logs bytes.Buffer
	trimmer := history.Trimmer{MaxTokens: 8000, ToolOutputBytes: 1 << 20}
	sum := &history.Summarizer{Trimmer: trimmer, Models: srv.Client().Models,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	contents := bigHistory(0, 10)
	out, err := sum.Prepare(ctx, info(contents))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := trimmer.Prepare(ctx, info(contents))
	if len(out) != len(want) {
		t.Errorf("after a failed summary: %d contents; want the Trimmer's %d", len(out), len(want))
	}
	if st := sum.Stats(); st.Failed != 1 || st.Summaries != 0 {
		t.Errorf("Stats() = %+v; want one failure", st)
	}
	if !strings.Contains(logs.String(), "summary refused") {
		t.Errorf("log = %q; want the failure", logs.String())
	}
}

// Under the threshold nothing is asked; a Summarizer without Models fails
// the run with ErrNoModels.
func TestSummarizerUnderTheThresholdAndMisuse(t *testing.T) {
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	sum := &history.Summarizer{Models: srv.Client().Models}
	contents := bigHistory(0, 2)
	out, err := sum.Prepare(ctx, info(contents))
	if err != nil || len(out) != len(contents) || &out[0] != &contents[0] || len(srv.Requests()) != 0 {
		t.Errorf("under the threshold: %d contents, %v, %d requests; want contents itself and no request", len(out), err, len(srv.Requests()))
	}
	if _, err := (&history.Summarizer{}).Prepare(ctx, info(contents)); !errors.Is(err, history.ErrNoModels) {
		t.Errorf("without Models: %v; want ErrNoModels", err)
	}
	if _, err := (&history.Summarizer{Models: srv.Client().Models, Trimmer: history.Trimmer{MaxTokens: -1}}).Prepare(ctx, info(contents)); err == nil {
		t.Errorf("a negative MaxTokens was accepted")
	}
}

func TestTranscript(t *testing.T) {
	contents := []*genai.Content{
		userText("Weather in Paris?"),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "thinking...", Thought: true},
			{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}, ThoughtSignature: []byte("s")},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: map[string]any{"result": "sunny"}}}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Sunny."}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("png")}}}},
	}
	want := `User: Weather in Paris?
Assistant called get_weather({"city":"Paris"})
Tool get_weather answered: {"result":"sunny"}
Assistant: Sunny.
Assistant: [image/png, 3 bytes]
`
	if got := history.Transcript(contents...); got != want {
		t.Errorf("Transcript() =\n%s\nwant\n%s", got, want)
	}
}

var _ agent.HistoryFunc = (&history.Summarizer{}).Prepare
