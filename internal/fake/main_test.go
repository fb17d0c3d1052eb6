package fake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

func TestMain(m *testing.M) {
	// genai's dependencies start an OpenCensus worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

const model = "gemini-2.5-flash"

// newServer starts a server that logs to t and closes when t ends.
func newServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	srv.SetLogger(t.Logf)
	t.Cleanup(srv.Close)
	return srv
}

// user returns a user turn of one text part.
func user(text string) *genai.Content {
	return genai.NewContentFromText(text, genai.RoleUser)
}

// asAPIError returns err as a genai.APIError, failing the test if it is not one.
func asAPIError(t *testing.T, err error) genai.APIError {
	t.Helper()
	var ae genai.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not a genai.APIError", err, err)
	}
	return ae
}

// post sends body to the server at path with the API key header unless
// key is empty, and returns the status and the body of the answer.
func post(t *testing.T, srv *fake.Server, method, path, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	resp, err := srv.ClientConfig().HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// apiErrorBody decodes the API's error JSON, failing the test if b is not one.
func apiErrorBody(t *testing.T, b []byte) genai.APIError {
	t.Helper()
	var body struct {
		Error *genai.APIError `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Error == nil {
		t.Fatalf("body %s is not the API's error JSON (%v)", b, err)
	}
	return *body.Error
}

// stream collects what GenerateContentStream yields: the chunks before the
// first error, and that error.
func stream(ctx context.Context, c *genai.Client, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) ([]*genai.GenerateContentResponse, error) {
	var chunks []*genai.GenerateContentResponse
	for chunk, err := range c.Models.GenerateContentStream(ctx, model, contents, cfg) {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, chunk)
	}
	return chunks, nil
}
