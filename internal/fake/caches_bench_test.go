package fake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// BenchmarkLongPrompt is one request of a long conversation: a system
// instruction of about 20,000 tokens, 40 tools and 50 turns, each request
// sharing its prefix with the one before (what implicit caching hashes).
func BenchmarkLongPrompt(b *testing.B) {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("ok") })
	c := srv.Client()
	var decls []*genai.FunctionDeclaration
	for i := range 40 {
		decls = append(decls, &genai.FunctionDeclaration{Name: fmt.Sprintf("tool_%d", i), Description: "A tool of the benchmark.",
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"q": {Type: genai.TypeString}}}})
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(strings.Repeat("Answer in one sentence. ", 3300), ""),
		Tools:             []*genai.Tool{{FunctionDeclarations: decls}},
	}
	var contents []*genai.Content
	for i := range 50 {
		contents = append(contents, user(fmt.Sprintf("Question %d?", i)), genai.NewContentFromText(fmt.Sprintf("Answer %d.", i), genai.RoleModel))
	}
	contents = append(contents, user("Last question?"))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Models.GenerateContent(ctx, model, contents, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
