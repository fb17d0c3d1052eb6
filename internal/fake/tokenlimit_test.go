package fake_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The limit compares the prompt as the answer's usageMetadata counts it:
// a prompt the server counted at N tokens passes a limit of N and is
// refused, with the API's 400, under a limit of N-1, on both methods.
func TestInputTokenLimit(t *testing.T) {
	srv := newServer(t)
	models := srv.Client().Models
	contents := []*genai.Content{user("What is the weather in Paris?")}
	srv.Enqueue(fake.Text("Sunny."))
	resp, err := models.GenerateContent(context.Background(), model, contents, nil)
	if err != nil {
		t.Fatalf("GenerateContent without a limit: %v", err)
	}
	n := int(resp.UsageMetadata.PromptTokenCount)

	srv.SetInputTokenLimit(n)
	srv.Enqueue(fake.Text("Sunny."))
	if _, err := models.GenerateContent(context.Background(), model, contents, nil); err != nil {
		t.Fatalf("GenerateContent at the limit (%d tokens): %v", n, err)
	}

	srv.SetInputTokenLimit(n - 1)
	_, err = models.GenerateContent(context.Background(), model, contents, nil)
	ae := asAPIError(t, err)
	want := fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, n-1)
	if ae.Code != http.StatusBadRequest || ae.Status != "INVALID_ARGUMENT" || ae.Message != want {
		t.Errorf("over the limit: %d %s %q; want 400 INVALID_ARGUMENT %q", ae.Code, ae.Status, ae.Message, want)
	}
	for _, err := range models.GenerateContentStream(context.Background(), model, contents, nil) {
		if ae := asAPIError(t, err); ae.Code != http.StatusBadRequest || ae.Message != want {
			t.Errorf("stream over the limit: %d %q; want 400 %q", ae.Code, ae.Message, want)
		}
		break
	}
	if rej := srv.Rejections(); len(rej) != 2 || rej[0].Rule != "input-token-limit" {
		t.Errorf("Rejections() = %v; want two by input-token-limit", rej)
	}
	if srv.Pending() != 0 {
		t.Errorf("a refused request took a reply")
	}

	srv.SetInputTokenLimit(0)
	srv.Enqueue(fake.Text("Sunny."))
	if _, err := models.GenerateContent(context.Background(), model, contents, nil); err != nil {
		t.Errorf("GenerateContent with the limit removed: %v", err)
	}
}
