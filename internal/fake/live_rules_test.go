package fake

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/genai"
)

// liveRuleCase is a passing and a failing exchange for one rule of
// liveRules: messages sent in order on one connection (the first is
// usually the setup). In fail, the last message is refused by the rule; in
// pass, every message is accepted. replies are queued before each.
type liveRuleCase struct {
	rule    string
	vertex  bool
	noAuth  bool // fail only: the handshake has no credentials
	replies []*LiveReply
	pass    []string
	fail    []string
}

const liveTestModel = "gemini-3.1-flash-live-preview"

func liveSetup(model string) string {
	return `{"setup":{"model":"models/` + model + `"}}`
}

var (
	liveSetupMsg = liveSetup(liveTestModel)
	liveTurn     = `{"clientContent":{"turns":[{"role":"user","parts":[{"text":"hi"}]}],"turnComplete":true}}`
	liveCallC1   = []*LiveReply{LiveCalls(&genai.FunctionCall{ID: "c1", Name: "f"}), LiveText("done")}
)

var liveRuleCases = []liveRuleCase{
	{rule: "live-auth", noAuth: true,
		pass: []string{liveSetupMsg}, fail: []string{liveSetupMsg}},
	{rule: "live-json",
		pass: []string{liveSetupMsg, `{"realtimeInput":{"text":"hi"}}`, `{"toolResponse":{}}`},
		fail: []string{liveSetupMsg, `{"clientContent":{},"realtimeInput":{}}`}},
	{rule: "live-json",
		pass: []string{liveSetupMsg, `{"contextUpdate":{}}`},
		fail: []string{liveSetupMsg, `{"client_content":{}}`}},
	{rule: "live-json",
		pass: []string{liveSetupMsg},
		fail: []string{liveSetupMsg, `not json`}},
	{rule: "live-setup-first",
		pass: []string{liveSetupMsg, liveTurn},
		fail: []string{liveTurn}},
	{rule: "live-setup-once",
		pass: []string{liveSetupMsg},
		fail: []string{liveSetupMsg, liveSetupMsg}},
	{rule: "live-model",
		pass: []string{liveSetup("gemini-2.5-flash-native-audio-preview-12-2025"), liveTurn},
		fail: []string{liveSetup("gemini-2.5-flash")}},
	{rule: "live-model",
		pass: []string{liveSetupMsg},
		fail: []string{`{"setup":{"model":"gemini-3.1-flash-live-preview"}}`}},
	{rule: "live-model", vertex: true,
		pass: []string{`{"setup":{"model":"projects/p/locations/us-central1/publishers/google/models/gemini-live-2.5-flash-native-audio"}}`},
		fail: []string{`{"setup":{"model":"projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"}}`}},
	{rule: "live-resumption-handle",
		pass: []string{`{"setup":{"model":"models/` + liveTestModel + `","sessionResumption":{}}}`},
		fail: []string{`{"setup":{"model":"models/` + liveTestModel + `","sessionResumption":{"handle":"no-such-handle"}}}`}},
	{rule: "live-response-modalities",
		pass: []string{`{"setup":{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["AUDIO"]}}}`},
		fail: []string{`{"setup":{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["TEXT"]}}}`}},
	{rule: "live-media-chunks",
		pass: []string{liveSetup("gemini-2.5-flash-native-audio-preview-12-2025"), `{"realtimeInput":{"mediaChunks":[{"mimeType":"audio/pcm;rate=16000","data":"AAA="}]}}`},
		fail: []string{liveSetupMsg, `{"realtimeInput":{"mediaChunks":[{"mimeType":"audio/pcm;rate=16000","data":"AAA="}]}}`}},
	{rule: "live-audio-format",
		pass: []string{liveSetupMsg, `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAA="}}}`,
			`{"realtimeInput":{"audio":{"mimeType":"audio/pcm","data":"AAA="}}}`,
			`{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=44100","data":"AAA="}}}`},
		fail: []string{liveSetupMsg, `{"realtimeInput":{"audio":{"mimeType":"audio/wav","data":"AAA="}}}`}},
	{rule: "live-audio-format",
		pass: []string{liveSetupMsg, `{"realtimeInput":{"video":{"mimeType":"image/jpeg","data":"AAA="}}}`},
		fail: []string{liveSetupMsg, `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=sixteen","data":"AAA="}}}`}},
	{rule: "live-audio-format",
		pass: []string{liveSetupMsg},
		fail: []string{liveSetupMsg, `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000"}}}`}},
	{rule: "live-tool-response", replies: liveCallC1,
		pass: []string{liveSetupMsg, liveTurn, `{"toolResponse":{"functionResponses":[{"id":"c1","name":"f","response":{"output":1}}]}}`},
		fail: []string{liveSetupMsg, liveTurn, `{"toolResponse":{"functionResponses":[{"id":"c2","name":"f","response":{"output":1}}]}}`}},
	{rule: "live-tool-response", replies: liveCallC1,
		pass: []string{liveSetupMsg, liveTurn, `{"toolResponse":{"functionResponses":[{"id":"c1","name":"f","response":{}}]}}`},
		fail: []string{liveSetupMsg, liveTurn, `{"toolResponse":{"functionResponses":[{"id":"c1","name":"f"},{"id":"c1","name":"f"}]}}`}},
}

// TestLiveRules runs every case of liveRuleCases against a server, through
// a websocket client, and requires a case for every rule.
func TestLiveRules(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range liveRuleCases {
		covered[tc.rule] = true
		t.Run(tc.rule+"/pass", func(t *testing.T) { runLiveCase(t, tc, tc.pass, false) })
		t.Run(tc.rule+"/fail", func(t *testing.T) { runLiveCase(t, tc, tc.fail, true) })
	}
	for _, r := range liveRules {
		if !covered[r.name] {
			t.Errorf("rule %q has no case in liveRuleCases", r.name)
		}
		if r.verified == "" && r.assumed == "" {
			t.Errorf("rule %q says neither what verifies it nor what is assumed", r.name)
		}
	}
}

// runLiveCase sends msgs on one connection. When fail is set, the last
// message must be refused by tc.rule (a handshake refused for live-auth);
// otherwise every message must be accepted, which a final scripted turn
// proves: its answer comes only after the server handled them all.
func runLiveCase(t *testing.T, tc liveRuleCase, msgs []string, fail bool) {
	srv := NewServer()
	srv.SetLogger(t.Logf)
	defer srv.Close()
	srv.EnqueueLive(tc.replies...)
	srv.EnqueueLive(LiveText("probe"))
	path := "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	header := http.Header{"X-Goog-Api-Key": {APIKey}}
	if tc.vertex {
		path = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
		header = http.Header{"Authorization": {"Bearer " + AccessToken}}
	}
	if fail && tc.noAuth {
		header = nil
	}
	ws, resp, err := websocket.DefaultDialer.Dial(srv.liveURL()+path, header)
	if fail && tc.noAuth {
		if !errors.Is(err, websocket.ErrBadHandshake) || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("Dial without a key: %v (status %v), want a refused handshake with 403", err, resp)
		}
		resp.Body.Close()
		checkLiveRejection(t, srv, tc.rule)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(30 * time.Second)) // hang guard
	for _, m := range msgs {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if !fail {
		ws.WriteMessage(websocket.TextMessage, []byte(liveTurn))
	}
	for {
		_, data, err := ws.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if !fail {
				t.Fatalf("closed %d %q, want every message accepted (rejections: %v)", ce.Code, ce.Text, srv.LiveRejections())
			}
			checkLiveRejection(t, srv, tc.rule)
			if rej := srv.LiveRejections()[0].Rejection; ce.Code != rej.Code || ce.Text != rej.Reason {
				t.Errorf("closed %d %q, but recorded %d %q", ce.Code, ce.Text, rej.Code, rej.Reason)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var msg genai.LiveServerMessage
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatal(err)
		}
		if sc := msg.ServerContent; sc != nil && sc.ModelTurn != nil && sc.ModelTurn.Parts[0].Text == "probe" {
			if fail {
				t.Fatalf("the last message was accepted, want it refused by %q", tc.rule)
			}
			if rej := srv.LiveRejections(); len(rej) != 0 {
				t.Fatalf("rejections: %+v", rej[0].Rejection)
			}
			return
		}
	}
}

func checkLiveRejection(t *testing.T, srv *Server, rule string) {
	t.Helper()
	rej := srv.LiveRejections()
	if len(rej) != 1 {
		t.Fatalf("%d rejections, want 1", len(rej))
	}
	if got := rej[0].Rejection.Rule; got != rule {
		t.Fatalf("refused by rule %q (%s), want %q", got, rej[0].Rejection.Reason, rule)
	}
	if strings.TrimSpace(rej[0].Rejection.Reason) == "" {
		t.Error("the rejection has no reason")
	}
}
