package openapitools_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/openapitools"
)

// hang makes the recorder's server answer nothing until the client gives
// up (or send its headers and part of a body, then nothing).
func hang(rec *recorder, partial bool) {
	rec.setReply(func(w http.ResponseWriter, r *http.Request) {
		if partial {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: first\n\n"))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	})
}

// A server that hangs is bounded by Options.Timeout: the model reads that
// the call took too long.
func TestHangingServerTimeout(t *testing.T) {
	rec := newRecorder(t)
	hang(rec, false)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL, Timeout: 50 * time.Millisecond,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	r := operation(t, api, "getItem").Tool.Execute(context.Background(), map[string]any{"itemId": "1"})
	if !r.IsError || !errors.Is(r.Err, context.DeadlineExceeded) || !strings.Contains(r.Output.(string), "took longer than 50ms") {
		t.Errorf("result %+v", r)
	}
}

// The call's own context bounds it too (agent.Config.ToolTimeout, a
// cancelled run), whatever Options.Timeout says.
func TestHangingServerContext(t *testing.T) {
	rec := newRecorder(t)
	hang(rec, false)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL, Timeout: -1,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := operation(t, api, "getItem").Tool.Execute(ctx, map[string]any{"itemId": "1"})
	if !r.IsError || !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("result %+v", r)
	}
}

// A body that stops coming (an event stream, say) is cut when the call's
// time runs out: the model reads what came, and that there was more.
func TestStalledBody(t *testing.T) {
	rec := newRecorder(t)
	hang(rec, true)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL, Timeout: 100 * time.Millisecond,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	r := operation(t, api, "getItem").Tool.Execute(context.Background(), map[string]any{"itemId": "1"})
	if r.IsError {
		t.Fatalf("result %+v", r)
	}
	resp := r.Output.(*openapitools.Response)
	if resp.Status != 200 || resp.Body != "data: first\n\n" || !strings.Contains(resp.Note, "took longer than 100ms") {
		t.Errorf("response %+v", resp)
	}
}
