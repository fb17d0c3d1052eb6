package main

// The offline model: package offline's model of the demo tools, served by
// internal/fake, plus the trip planner's part (trip.go); its answers
// stream in visible pieces.

import (
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/offline"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// offlineModelName is the model the fake serves. Its gemini-3 prefix makes
// the fake behave like Gemini 3: call ids, thought signatures, and the
// check that signatures come back.
const offlineModelName = "gemini-3-offline-demo"

// offlineChunk and offlineEventDelay make the offline answer stream in
// visible pieces.
const (
	offlineChunk      = 12
	offlineEventDelay = 15 * time.Millisecond
)

// offlineModel answers one request.
func offlineModel(req *fake.Request) *fake.Reply {
	if len(req.Contents) > 0 {
		if reply := offlineTrip(req); reply != nil { // the /trip planner
			return reply
		}
	}
	calls, text := offline.Answer(req)
	if len(calls) > 0 {
		return fake.Calls(calls...)
	}
	return offlineText(text)
}

func offlineText(s string) *fake.Reply {
	r := fake.Text(s).WithTextChunk(offlineChunk)
	r.EventDelay = offlineEventDelay
	return r
}
