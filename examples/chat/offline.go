package main

// The chat's part of the offline model (package offline is the rest): a
// made-up web search for -search; the trip planner's is in trip.go.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"google.golang.org/genai"
)

// searchRE finds a question that asks for a web search.
var searchRE = regexp.MustCompile(`(?i)\b(search|look up|latest|news)\b`)

// offlineSearch answers a question that asks for a search, when the
// request gives the model Google Search (-search): the API runs the search
// (its toolCall and toolResponse parts) and the answer is grounded in made-up
// pages, as the real model's is in real ones. It returns nil for other
// requests.
func offlineSearch(req *fake.Request) *fake.Reply {
	if len(req.Contents) == 0 || !slices.ContainsFunc(req.Tools, func(t *genai.Tool) bool { return t.GoogleSearch != nil }) {
		return nil
	}
	question := offline.Text(req.Contents[len(req.Contents)-1])
	if !searchRE.MatchString(question) {
		return nil
	}
	query := strings.Join(strings.Fields(searchRE.ReplaceAllString(question, "")), " ")
	answer := fmt.Sprintf("The offline model cannot search the web, so here is a made-up finding about %q.", strings.Trim(query, " ?!.:"))
	parts := append(fake.GoogleSearch(query), &genai.Part{Text: answer})
	return offline.Streamed(fake.Parts(parts...).WithGrounding(fake.WebGrounding(answer, "https://example.com/offline-search")))
}
