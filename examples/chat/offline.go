package main

// The offline model: package offline's model of the demo tools, served by
// internal/fake, plus the trip planner's part (trip.go) and a made-up web
// search (-search); its answers stream in visible pieces.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/offline"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
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
		if reply := offlineSearch(req, offline.Text(req.Contents[len(req.Contents)-1])); reply != nil {
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

// searchRE finds a question that asks for a web search.
var searchRE = regexp.MustCompile(`(?i)\b(search|look up|latest|news)\b`)

// offlineSearch answers a question that asks for a search, when the
// request gives the model Google Search (-search): the API runs the search
// (its toolCall and toolResponse parts) and the answer is grounded in made-up
// pages, as the real model's is in real ones.
func offlineSearch(req *fake.Request, question string) *fake.Reply {
	if !searchRE.MatchString(question) || !slices.ContainsFunc(req.Tools, func(t *genai.Tool) bool { return t.GoogleSearch != nil }) {
		return nil
	}
	query := strings.Join(strings.Fields(searchRE.ReplaceAllString(question, "")), " ")
	answer := fmt.Sprintf("The offline model cannot search the web, so here is a made-up finding about %q.", strings.Trim(query, " ?!.:"))
	parts := append(fake.GoogleSearch(query), &genai.Part{Text: answer})
	r := fake.Parts(parts...).WithGrounding(fake.WebGrounding(answer, "https://example.com/offline-search"))
	r.TextChunk, r.EventDelay = offlineChunk, offlineEventDelay
	return r
}
