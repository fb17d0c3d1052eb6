package fake

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/httprr"
)

// The conformance test's own parts, on traces written here: a harness that
// cannot see a disagreement would pass on any fake.

const (
	unaryPath  = "/v1beta/models/gemini-2.5-flash:generateContent"
	streamPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	helloBody  = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	sseBody    = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n"
)

func TestRecordedError(t *testing.T) {
	for _, tc := range []struct{ body, status, message string }{
		{`{"error":{"code":400,"message":"a","status":"INVALID_ARGUMENT"}}`, "INVALID_ARGUMENT", "a"},
		{`[{"error":{"code":400,"message":"b","status":"INVALID_ARGUMENT"}}]`, "INVALID_ARGUMENT", "b"},
		// A recording edited by hand: a trailing comma where a field was cut.
		{"[{\"error\": {\"code\": 400, \"message\": \"c \\\"q\\\"\",\n \"status\": \"INVALID_ARGUMENT\",\n }}]", "INVALID_ARGUMENT", `c "q"`},
	} {
		if got := recordedError([]byte(tc.body)); got.Status != tc.status || got.Message != tc.message {
			t.Errorf("recordedError(%s) = %+v; want %s %q", tc.body, got, tc.status, tc.message)
		}
	}
}

// judge agrees where the fake answers as the recording, disagrees where it
// does not, and sets aside what cannot be judged.
func TestJudge(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*Request) *Reply { return Text("ok") })
	client := newTrafficClient(srv)
	unknownField := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"thinking":true}`
	unknownFieldErr := `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"thinking\": Cannot find field.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"Invalid JSON payload received. Unknown name \"thinking\": Cannot find field."}]}]}}`
	for _, tc := range []struct {
		name       string
		req, resp  string
		judged     bool
		agrees     bool
		wantReason string
	}{
		{"accepted, accepted", httprr.RequestText(unaryPath, helloBody), httprr.ResponseText(200, "application/json", "{}"), true, true, ""},
		{"accepted, streamed", httprr.RequestText(streamPath, helloBody), httprr.ResponseText(200, "text/event-stream", sseBody), true, true, ""},
		{"accepted by the API, refused by the fake", httprr.RequestText(unaryPath, unknownField), httprr.ResponseText(200, "application/json", "{}"), true, false, ""},
		{"refused alike", httprr.RequestText(unaryPath, unknownField), httprr.ResponseText(400, "application/json", unknownFieldErr), true, true, ""},
		{"refused with another message", httprr.RequestText(unaryPath, unknownField),
			httprr.ResponseText(400, "application/json", `{"error":{"code":400,"message":"something else","status":"INVALID_ARGUMENT"}}`), true, false, ""},
		{"refused with other field violations", httprr.RequestText(unaryPath, unknownField),
			httprr.ResponseText(400, "application/json", strings.Replace(unknownFieldErr, `[{"description"`, `[{"field":"x","description"`, 1)), true, false, ""},
		{"refused by the API, accepted by the fake", httprr.RequestText(unaryPath, helloBody),
			httprr.ResponseText(400, "application/json", `{"error":{"code":400,"message":"no","status":"INVALID_ARGUMENT"}}`), true, false, ""},
		{"no credentials, replayed without", httprr.RequestText(unaryPath, helloBody),
			httprr.ResponseText(403, "application/json", `{"error":{"code":403,"message":"`+unregisteredCallers+`","status":"PERMISSION_DENIED"}}`), true, true, ""},
		{"a cache the recorded API made", httprr.RequestText(unaryPath, `{"cachedContent":"cachedContents/abc","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`),
			httprr.ResponseText(200, "application/json", "{}"), false, false, "a cache the recorded API made"},
		{"overloaded", httprr.RequestText(unaryPath, helloBody),
			httprr.ResponseText(503, "application/json", `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`), false, false, "5xx"},
		{"a key the API did not take", httprr.RequestText(unaryPath, helloBody),
			httprr.ResponseText(400, "application/json", `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`), false, false, "credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exs, err := httprr.Read("t.httprr", []byte(httprr.Format([2]string{tc.req, tc.resp})))
			if err != nil {
				t.Fatal(err)
			}
			v := judge(t, client, srv, exs[0])
			if v.judged != tc.judged || v.agrees != tc.agrees || !strings.Contains(v.reason, tc.wantReason) {
				t.Errorf("judge() = %+v; want judged %t, agrees %t, reason containing %q", v, tc.judged, tc.agrees, tc.wantReason)
			}
			if v.judged && !v.agrees && !strings.Contains(v.detail, "the fake answered") {
				t.Errorf("a disagreement without its detail: %+v", v)
			}
		})
	}
}
