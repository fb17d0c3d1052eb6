package temporalagent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// finishedLog is the log of a served run over, whose answer is text.
func finishedLog(text string) *servedLog {
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	done := &agentserver.Done{State: agentserver.StateDone, Text: text, Output: json.RawMessage(`{"n":1}`)}
	return &servedLog{In: servedInput{RunID: "trun_x", Conversation: "c", User: "u", Started: t0},
		Settled: map[string]string{"trun_x.0.0": "decided"},
		Done:    done, Records: []agentserver.Record{
			{Offset: 0, Kind: agentserver.KindStart, Time: t0},
			{Offset: 1, Kind: agentserver.KindText, Time: t0, Text: text},
			{Offset: 2, Kind: agentserver.KindDone, Time: t0.Add(time.Second), Done: done},
		}}
}

// What a served run leaves in its result once over: its whole log when it
// fits, its done record otherwise (with how its calls were decided), that
// record's text cut to fit the budget; and what a reader reads from it.
func TestFinalView(t *testing.T) {
	if v := (*servedLog)(nil).final(MaxFinalViewBytes); v != nil {
		t.Errorf("the final view of no served run: %+v", v)
	}
	if v := (&servedLog{Records: []agentserver.Record{{Kind: agentserver.KindStart}}}).final(MaxFinalViewBytes); v != nil {
		t.Errorf("the final view of a run not over: %+v", v)
	}

	s := finishedLog("Hello.")
	v := s.final(MaxFinalViewBytes)
	if len(v.Records) != 3 || v.Info.Done != nil || v.Info.Len != 3 || v.User != "u" || v.Settled != nil {
		t.Fatalf("kept: %+v", v)
	}
	read, err := finalView(&v.LogView, 1, false)
	if err != nil || len(read.Records) != 2 || read.Records[0].Text != "Hello." || read.Info.Done == nil ||
		read.Info.Done.Text != "Hello." || read.Info.User != "u" || !read.Info.Ended.Equal(s.Records[2].Time) {
		t.Fatalf("read from 1: %+v, %v", read, err)
	}
	if _, err := finalView(&v.LogView, 4, false); err == nil || !strings.Contains(err.Error(), "outside the log") {
		t.Errorf("read past the log: %v", err)
	}
	if _, err := finalView(&v.LogView, -1, false); err == nil {
		t.Error("read at -1: no error")
	}
	if _, err := finalView(&LogView{}, 0, false); err == nil {
		t.Error("a final view without a done record: no error")
	}

	// Too large to keep whole: the done record alone, and how the calls
	// were decided.
	s = finishedLog(strings.Repeat("a", 100<<10))
	s.Records[1].Text += strings.Repeat("b", 100<<10)
	v = s.final(MaxFinalViewBytes)
	if len(v.Records) != 1 || v.Records[0].Offset != 2 || v.Info.Len != 3 || jsonSize(v) > MaxFinalViewBytes ||
		v.Settled["trun_x.0.0"] != "decided" || v.Records[0].Done.Text != s.Done.Text {
		t.Errorf("the done record alone: %d records, %d bytes, settled %v", len(v.Records), jsonSize(v), v.Settled)
	}

	// A done record over the budget: its output goes, then its text is
	// cut, at a rune's boundary; the run's own log is left as it was.
	long := strings.Repeat("é", 200<<10)
	s = finishedLog(long)
	v = s.final(MaxFinalViewBytes)
	d := v.Records[0].Done
	if size := jsonSize(v); size > MaxFinalViewBytes || d.Output != nil || v.Settled == nil || !strings.HasSuffix(d.Text, "…") ||
		!utf8.ValidString(d.Text) || len(d.Text) < MaxFinalViewBytes/2 {
		t.Errorf("cut: %d bytes, output %s, text of %d bytes", size, d.Output, len(d.Text))
	}
	if s.Done.Text != long || s.Done.Output == nil || s.Records[2].Done.Text != long {
		t.Error("cutting the final view changed the run's log")
	}
	small := finishedLog("Hello.").final(100)
	if d := small.Records[0].Done; d.Output != nil || d.Text != "…" {
		t.Errorf("a budget too small for any text: %+v", d)
	}
	whole := finishedLog("Hello.")
	whole.Records, whole.Settled = whole.Records[2:], nil // the done record alone is the whole log
	budget := jsonSize(whole.final(MaxFinalViewBytes)) - 1
	if d := whole.final(budget).Records[0].Done; d.Output != nil || d.Text != "Hello." {
		t.Errorf("a budget that the output alone passes: %+v", d)
	}

	// An aborted run's done record is read at any offset.
	aborted := &LogView{Info: agentserver.RunInfo{ID: "trun_x", Len: 1},
		Records: []agentserver.Record{{Kind: agentserver.KindDone, Done: &agentserver.Done{State: agentserver.StateFailed}}}}
	if read, err := finalView(aborted, 7, true); err != nil || len(read.Records) != 1 || read.Info.Done == nil {
		t.Errorf("an aborted run read at 7: %+v, %v", read, err)
	}
}

func TestCutText(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"héllo", 2, "h"}, {"héllo", 3, "hé"}, {"abc", 5, "abc"}, {"abc", 0, ""}, {"abc", -2, ""}} {
		if got := cutText(c.s, c.n); got != c.want {
			t.Errorf("cutText(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
