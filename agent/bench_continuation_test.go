package agent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The answer of the continuation benchmarks, in one request or in three.
var benchHops = []string{"The first third of a long answer. ", "The second third of it. ", "And the end."}

// longClient starts a fake server answering each conversation with
// benchHops: in three hops when hops is set, else in one request.
func longClient(b *testing.B, hops bool) agent.Models {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		if !hops {
			return fake.Text(benchHops[0] + benchHops[1] + benchHops[2])
		}
		switch string(req.ContinuationToken) {
		case "":
			return fake.Text(benchHops[0]).WithContinuationToken([]byte("hop-1"))
		case "hop-1":
			return fake.Text(benchHops[1]).WithContinuationToken([]byte("hop-2"))
		}
		return fake.Text(benchHops[2])
	})
	return srv.Client().Models
}

func benchLong(b *testing.B, hops bool) {
	a, err := agent.New(agent.Config{Models: longClient(b, hops), Model: model})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := a.Run(context.Background(), genai.Text("A long answer, please."))
		if err != nil || res.Text != benchHops[0]+benchHops[1]+benchHops[2] {
			b.Fatal(res.Text, err)
		}
	}
}

// BenchmarkRunLongAnswerOneRequest is an answer the API makes in one
// request; BenchmarkRunLongAnswerThreeHops the same answer cut twice and
// continued: their difference, halved, is what a continuation hop costs,
// the fake server's answer to one more request included.
func BenchmarkRunLongAnswerOneRequest(b *testing.B) { benchLong(b, false) }

// BenchmarkRunLongAnswerThreeHops: see BenchmarkRunLongAnswerOneRequest.
func BenchmarkRunLongAnswerThreeHops(b *testing.B) { benchLong(b, true) }

// BenchmarkRawLongAnswerThreeHops is the floor of the three-hop answer:
// the same three requests made by hand on the raw genai client, with
// genai's automatic continuation off, the hops' parts appended.
func BenchmarkRawLongAnswerThreeHops(b *testing.B) {
	models := longClient(b, true)
	off := false
	ctx := context.Background()
	contents := genai.Text("A long answer, please.")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		config := &genai.GenerateContentConfig{AutomaticContinuation: &off}
		var parts []*genai.Part
		for {
			resp, err := models.GenerateContent(ctx, model, contents, config)
			if err != nil {
				b.Fatal(err)
			}
			c := resp.Candidates[0]
			parts = append(parts, c.Content.Parts...)
			if c.FinishReason != genai.FinishReasonContinuation {
				break
			}
			next := *config
			next.ContinuationToken = c.ContinuationToken
			config = &next
		}
		if len(parts) != 3 {
			b.Fatal(len(parts))
		}
	}
}
