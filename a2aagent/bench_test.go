package a2aagent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// benchRecords is a run's log: a turn of two calls, then an answer that
// streams in 40 pieces.
func benchRecords() []agentserver.Record {
	now := time.Now()
	recs := []agentserver.Record{{Kind: agentserver.KindStart, Time: now}, {Kind: agentserver.KindStep}}
	for i, city := range []string{"Paris", "Tokyo"} {
		c := &agentserver.Call{ID: "run_X-c0-" + string(rune('0'+i)), Name: "get_weather", Args: json.RawMessage(`{"city":"` + city + `"}`)}
		recs = append(recs, agentserver.Record{Kind: agentserver.KindToolCall, Call: c})
		recs = append(recs, agentserver.Record{Kind: agentserver.KindToolResult, Call: c,
			Result: &agentserver.CallResult{Output: json.RawMessage(`{"city":"` + city + `","condition":"sunny","temperature":21}`)}})
	}
	recs = append(recs, agentserver.Record{Kind: agentserver.KindStepEnd}, agentserver.Record{Kind: agentserver.KindStep, Turn: 1})
	for range 40 {
		recs = append(recs, agentserver.Record{Kind: agentserver.KindText, Turn: 1, Text: "Sunny in P"})
	}
	recs = append(recs, agentserver.Record{Kind: agentserver.KindStepEnd, Turn: 1},
		agentserver.Record{Kind: agentserver.KindDone, Turn: 1, Time: now, Done: &agentserver.Done{State: agentserver.StateDone}})
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	return recs
}

// The stream of a run: each record's events, as message/stream writes them.
func BenchmarkStreamRun(b *testing.B) {
	recs := benchRecords()
	b.ReportAllocs()
	for b.Loop() {
		w := &agentserver.EventWriter{}
		enc := &encoder{id: json.RawMessage(`"req-1"`), tr: newTranslator(fileSource{}, agentserver.RunInfo{ID: "run_X", Thread: "ctx-1"})}
		for i := range recs {
			enc.Record(w, &recs[i], i == len(recs)-1)
		}
	}
	b.ReportMetric(float64(len(recs)), "records/op")
}

// The task a run's log folds into: tasks/get, message/send.
func BenchmarkSnapshotRun(b *testing.B) {
	recs := benchRecords()
	b.ReportAllocs()
	for b.Loop() {
		info := agentserver.RunInfo{ID: "run_X", Thread: "ctx-1"}
		tr := newTranslator(fileSource{}, info)
		snap := newSnapshot(tr, info)
		for i := range recs {
			for _, ev := range tr.events(&recs[i], i == len(recs)-1) {
				snap.apply(ev)
			}
		}
	}
}
