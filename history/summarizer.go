package history

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// DefaultSummaryInstruction is what a [Summarizer] asks the model, followed
// by the transcript of the exchanges to summarize.
const DefaultSummaryInstruction = "The conversation below between a user and an assistant that uses tools is about to be " +
	"removed from the assistant's context to save space. Write a concise summary of it that the assistant can rely " +
	"on to continue the conversation: what the user asked for and decided, the facts the tools returned that may " +
	"matter later (names, numbers, identifiers), and what is still open. Write only the summary."

// SummaryPrefix begins the text of the content that holds a summary, so
// that the model, and a reader of the requests, can tell it from what the
// user wrote.
const SummaryPrefix = "[Summary of the earlier conversation, which was removed to save context]\n"

// A Summarizer keeps each model call within a token budget as a [Trimmer]
// does, but rather than dropping the oldest exchanges unseen, it asks the
// model for a summary of them and sends the summary in their place: a
// user content beginning with [SummaryPrefix], where they were. Its Prepare
// method is an [agent.HistoryFunc]:
//
//	sum := &history.Summarizer{Trimmer: history.Trimmer{MaxTokens: 200_000}, Models: client.Models}
//	a, err := agent.New(agent.Config{…, PrepareHistory: sum.Prepare})
//
// A trim goes as a Trimmer's: old tool outputs are shortened first, and
// only when that is not enough are the oldest exchanges dropped, and
// summarized. A later trim of the same run summarizes the earlier summary
// with what it drops, so the run carries one summary that rolls forward.
//
// The summary calls are not model turns of the run: their tokens are not
// in the run's Result.Usage, and [Summarizer.Stats] counts them. When a
// summary call fails or returns no text, the exchanges are dropped as a
// Trimmer drops them, the run goes on, and the failure is logged and
// counted. A Summarizer keeps only these counts: one may serve any number
// of concurrent runs. It must not be copied after first use.
type Summarizer struct {
	// Trimmer says when to trim, how far, and what to keep (see
	// [Trimmer]); its zero value trims at DefaultMaxTokens.
	Trimmer Trimmer

	// Models makes the summary calls; the agent's own client
	// (genai.Client.Models) serves. Required.
	Models agent.Models

	// Model is the model that writes the summaries. Empty means the run's
	// own model.
	Model string

	// Config is the config of the summary calls: a MaxOutputTokens, a
	// thinking budget, safety settings... Nil sends none.
	Config *genai.GenerateContentConfig

	// Instruction is what the model is asked, before the transcript of the
	// exchanges to summarize. Empty means DefaultSummaryInstruction.
	Instruction string

	// Logger receives a warning for each summary call that failed. Nil
	// means slog.Default().
	Logger *slog.Logger

	mu    sync.Mutex
	stats SummaryStats
	// written holds the summaries written last, by the hash of the
	// contents they summarize, so that a run that resumes a conversation
	// summarizes only what it drops beyond what an earlier run did.
	written map[[sha256.Size]byte]string
	order   [][sha256.Size]byte // of written's keys, oldest first
}

// keptSummaries bounds how many summaries a Summarizer remembers.
const keptSummaries = 64

// SummaryStats counts a Summarizer's summary calls.
type SummaryStats struct {
	// Summaries is how many summaries were written and sent.
	Summaries int

	// Failed is how many summary calls failed or returned no text: their
	// exchanges were dropped without a summary.
	Failed int

	// Reused is how many trims sent a summary written before, with no
	// call: a run that resumed a conversation dropped what an earlier run
	// had summarized, and nothing more.
	Reused int

	// Usage sums the tokens of every summary call, failed ones included.
	Usage agent.Usage
}

// ErrNoModels is the error of a Summarizer with no Models.
var ErrNoModels = errors.New("history: Summarizer.Models is nil")

// Prepare returns h.Contents when the prompt fits Trimmer.MaxTokens; else
// a copy trimmed as a Trimmer trims it, with a summary of the exchanges
// it drops in their place. It never modifies h.Contents or the contents it
// holds.
func (s *Summarizer) Prepare(ctx context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
	if s.Models == nil {
		return nil, ErrNoModels
	}
	set, err := s.Trimmer.settings()
	if err != nil {
		return nil, err
	}
	total, over := set.over(h)
	if !over {
		return h.Contents, nil
	}
	t := set.trim(h.Contents, total)
	if len(t.dropped) == 0 {
		return t.contents, nil
	}
	summary, err := s.summary(ctx, h.Model, t.dropped)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("history: summarizing %d contents: %w", len(t.dropped), err)
		}
		s.logger().LogAttrs(ctx, slog.LevelWarn, "history: the summary call failed; the oldest exchanges are dropped without one",
			slog.Int("contents", len(t.dropped)), slog.Any("error", err))
		return t.contents, nil
	}
	return slices.Insert(slices.Clone(t.contents), t.at, summaryContent(summary)), nil
}

// summaryContent is the content that holds a summary.
func summaryContent(summary string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: SummaryPrefix + summary}}}
}

// summary returns the summary of dropped: one written before, when an
// earlier trim dropped the very same contents; else a new one, of the
// summary written for the longest start of dropped that has one, if any,
// and of the contents that follow it.
func (s *Summarizer) summary(ctx context.Context, model string, dropped []*genai.Content) (string, error) {
	keys := make([][sha256.Size]byte, len(dropped))
	h := sha256.New()
	for i, c := range dropped {
		b, _ := json.Marshal(c) // it was sent: it encodes
		h.Write(b)
		h.Sum(keys[i][:0])
	}
	s.mu.Lock()
	from, earlier := 0, ""
	for i := len(dropped) - 1; i >= 0; i-- {
		if sum, ok := s.written[keys[i]]; ok {
			from, earlier = i+1, sum
			break
		}
	}
	if from == len(dropped) {
		s.stats.Reused++
		s.mu.Unlock()
		return earlier, nil
	}
	s.mu.Unlock()
	rest := dropped[from:]
	if from > 0 {
		rest = append([]*genai.Content{summaryContent(earlier)}, rest...)
	}
	summary, err := s.summarize(ctx, model, rest)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = make(map[[sha256.Size]byte]string, keptSummaries)
	}
	key := keys[len(keys)-1]
	if _, ok := s.written[key]; !ok {
		if len(s.order) == keptSummaries {
			delete(s.written, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, key)
	}
	s.written[key] = summary
	return summary, nil
}

// Stats returns the counts of the summary calls made so far.
func (s *Summarizer) Stats() SummaryStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// summarize asks the model for a summary of contents.
func (s *Summarizer) summarize(ctx context.Context, model string, contents []*genai.Content) (string, error) {
	if s.Model != "" {
		model = s.Model
	}
	instruction := s.Instruction
	if instruction == "" {
		instruction = DefaultSummaryInstruction
	}
	prompt := instruction + "\n\n" + Transcript(contents...)
	resp, err := s.Models.GenerateContent(ctx, model, genai.Text(prompt), s.Config)
	var text string
	if err == nil {
		var finish genai.FinishReason
		if resp != nil && len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
			text, finish = answerText(resp.Candidates[0].Content), resp.Candidates[0].FinishReason
		}
		if text == "" {
			err = fmt.Errorf("the model returned no summary (finish reason %q)", finish)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if resp != nil {
		s.stats.Usage = s.stats.Usage.Plus(agent.UsageOf(resp.UsageMetadata))
	}
	if err != nil {
		s.stats.Failed++
		return "", err
	}
	s.stats.Summaries++
	return text, nil
}

// answerText returns the text of c's parts that are not thoughts.
func answerText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

func (s *Summarizer) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Transcript renders contents as the plain text a Summarizer asks the model
// to summarize, a line or more per part: "User: …" and "Assistant: …" for
// text, "Assistant called NAME(ARGS)" for a function call, "Tool NAME
// answered: RESPONSE" for its answer, "[image/png, 48213 bytes]" for
// media. Thoughts are left out. Being text, it holds no function call
// whose answer or thought signature the API would check.
func Transcript(contents ...*genai.Content) string {
	var b strings.Builder
	for _, c := range contents {
		if c == nil {
			continue
		}
		who := "User"
		if c.Role == genai.RoleModel {
			who = "Assistant"
		}
		for _, p := range c.Parts {
			switch {
			case p == nil || p.Thought:
			case p.FunctionCall != nil:
				args, _ := json.Marshal(p.FunctionCall.Args)
				fmt.Fprintf(&b, "%s called %s(%s)\n", who, p.FunctionCall.Name, args)
			case p.FunctionResponse != nil:
				resp, _ := json.Marshal(p.FunctionResponse.Response)
				fmt.Fprintf(&b, "Tool %s answered: %s\n", p.FunctionResponse.Name, resp)
			case p.InlineData != nil:
				fmt.Fprintf(&b, "%s: [%s, %d bytes]\n", who, p.InlineData.MIMEType, len(p.InlineData.Data))
			case p.FileData != nil:
				fmt.Fprintf(&b, "%s: [%s at %s]\n", who, p.FileData.MIMEType, p.FileData.FileURI)
			case p.Text != "":
				fmt.Fprintf(&b, "%s: %s\n", who, p.Text)
			}
		}
	}
	return b.String()
}
