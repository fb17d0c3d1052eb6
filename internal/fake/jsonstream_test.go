package fake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// legacyBody is a request as the legacy Go SDK (cloud.google.com/go/ai)
// sends it: the whole request message, model included, enums by number.
const legacyBody = `{"model":"models/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}],` +
	`"safetySettings":[{"category":10,"threshold":4}],"generationConfig":{"candidateCount":1,"maxOutputTokens":"64"},` +
	`"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":6,"properties":{"a":{"type":1}}}}]}],` +
	`"toolConfig":{"functionCallingConfig":{"mode":1}}}`

// streamRaw posts body to a stream path and returns the response status,
// Content-Type and body.
func streamRaw(t *testing.T, srv *fake.Server, query, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
		srv.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent"+query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-goog-api-key", fake.APIKey)
	resp, err := srv.ClientConfig().HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// readArray reads a streamed JSON array the way gax-go's ProtoJSONStream
// does: the opening bracket, then one element at a time.
func readArray(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		t.Fatalf("body %q does not open a JSON array (%v, %v)", body, tok, err)
	}
	var out []json.RawMessage
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("element %d of %q: %v", len(out), body, err)
		}
		out = append(out, raw)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		t.Fatalf("body %q does not close its JSON array (%v, %v)", body, tok, err)
	}
	return out
}

// Issue 13: streamGenerateContent without alt=sse streams a JSON array, and
// the legacy Go SDK's request, with its model field and its enums by
// number, is accepted.
func TestStreamJSONArray(t *testing.T) {
	for _, query := range []string{"", "?alt=json", "?%24alt=json%3Benum-encoding%3Dint"} {
		srv := newServer(t)
		srv.Enqueue(fake.Text("one two three").WithTextChunk(4))
		code, ct, body := streamRaw(t, srv, query, legacyBody)
		if code != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%q: %d %q %s; want 200 application/json", query, code, ct, body)
		}
		var text string
		elems := readArray(t, body)
		for _, e := range elems {
			var r genai.GenerateContentResponse
			if err := json.Unmarshal(e, &r); err != nil {
				t.Fatal(err)
			}
			text += r.Text()
		}
		var last genai.GenerateContentResponse
		json.Unmarshal(elems[len(elems)-1], &last)
		if text != "one two three" || len(elems) != 4 || last.Candidates[0].FinishReason != genai.FinishReasonStop {
			t.Errorf("%q: %d elements, text %q; want 4 pieces of \"one two three\", the last finishing STOP", query, len(elems), text)
		}
		req := srv.LastRequest()
		if req.Rejection != nil || req.SafetySettings[0].Category != genai.HarmCategoryDangerousContent {
			t.Errorf("%q: request %+v; want it accepted with category 10 read as HARM_CATEGORY_DANGEROUS_CONTENT", query, req.Rejection)
		}
	}
}

func TestStreamJSONArrayErrors(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(
		fake.Text("one two three").WithTextChunk(4).WithStreamError(2, 503, "The model is overloaded."),
		fake.RateLimited(0),
	)
	_, _, body := streamRaw(t, srv, "", legacyBody)
	elems := readArray(t, body)
	var e struct{ Error genai.APIError }
	if len(elems) != 3 || json.Unmarshal(elems[2], &e) != nil || e.Error.Code != 503 {
		t.Errorf("mid-stream error: %s; want 2 chunks then {\"error\":{\"code\":503…}}", body)
	}
	code, _, body := streamRaw(t, srv, "", legacyBody)
	elems = readArray(t, body)
	if code != http.StatusTooManyRequests || len(elems) != 1 || json.Unmarshal(elems[0], &e) != nil || e.Error.Code != 429 {
		t.Errorf("error before the stream: %d %s; want 429 [{\"error\":…}]", code, body)
	}
	code, _, body = streamRaw(t, srv, "?alt=proto", legacyBody)
	if rej := srv.Rejections(); code != http.StatusBadRequest || len(rej) != 1 || rej[0].Rule != "route" {
		t.Errorf("alt=proto: %d %s; want 400 by rule route", code, body)
	}
}
