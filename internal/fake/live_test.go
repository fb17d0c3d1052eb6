package fake_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

const (
	liveModel  = "gemini-3.1-flash-live-preview"
	audioModel = "gemini-2.5-flash-native-audio-preview-12-2025"
)

// liveBackends runs f once per backend, with a client of the server's Live
// API for it.
func liveBackends(t *testing.T, f func(t *testing.T, srv *fake.Server, client *genai.Client)) {
	for _, b := range []struct {
		name string
		cfg  func(*fake.Server) *genai.ClientConfig
	}{
		{"gemini", (*fake.Server).LiveClientConfig},
		{"vertex", (*fake.Server).LiveVertexClientConfig},
	} {
		t.Run(b.name, func(t *testing.T) {
			srv := newServer(t)
			client, err := genai.NewClient(context.Background(), b.cfg(srv))
			if err != nil {
				t.Fatal(err)
			}
			f(t, srv, client)
		})
	}
}

// connect opens a live session that closes when t ends, or after a minute,
// so that a Receive that would wait forever fails the test instead.
func connect(t *testing.T, client *genai.Client, model string, cfg *genai.LiveConnectConfig) *genai.Session {
	t.Helper()
	sess, err := client.Live.Connect(context.Background(), model, cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	guard := time.AfterFunc(time.Minute, func() { sess.Close() }) // hang guard
	t.Cleanup(func() {
		guard.Stop()
		sess.Close()
	})
	if m := receive(t, sess); m.SetupComplete == nil {
		t.Fatalf("first message %+v, want setupComplete", m)
	}
	return sess
}

func receive(t *testing.T, sess *genai.Session) *genai.LiveServerMessage {
	t.Helper()
	m, err := sess.Receive()
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return m
}

// receiveTurn receives messages until the model's turn completes and
// returns them.
func receiveTurn(t *testing.T, sess *genai.Session) []*genai.LiveServerMessage {
	t.Helper()
	var msgs []*genai.LiveServerMessage
	for {
		m := receive(t, sess)
		msgs = append(msgs, m)
		if m.ServerContent != nil && m.ServerContent.TurnComplete {
			return msgs
		}
	}
}

// closeError returns the close frame that ended the session, failing the
// test if err is not one.
func closeError(t *testing.T, err error) *websocket.CloseError {
	t.Helper()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *websocket.CloseError", err)
	}
	return ce
}

// receiveClose receives until the server closes the session and returns
// the close frame.
func receiveClose(t *testing.T, sess *genai.Session) *websocket.CloseError {
	t.Helper()
	for {
		if _, err := sess.Receive(); err != nil {
			return closeError(t, err)
		}
	}
}

func text(msgs []*genai.LiveServerMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.ServerContent != nil && m.ServerContent.ModelTurn != nil {
			for _, p := range m.ServerContent.ModelTurn.Parts {
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

func userTurn(s string) genai.LiveClientContentInput {
	return genai.LiveClientContentInput{Turns: []*genai.Content{user(s)}}
}

func TestLiveTextTurn(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(fake.LiveTurn(fake.LiveModelText("Hello"), fake.LiveModelText(" there"), fake.LiveUsage(12, 3)))
		sess := connect(t, client, liveModel, &genai.LiveConnectConfig{ResponseModalities: []genai.Modality{genai.ModalityText}})
		if err := sess.SendClientContent(userTurn("Hi")); err != nil {
			t.Fatal(err)
		}
		msgs := receiveTurn(t, sess)
		if got := text(msgs); got != "Hello there" {
			t.Errorf("text = %q", got)
		}
		var usage *genai.UsageMetadata
		for _, m := range msgs {
			if m.UsageMetadata != nil {
				usage = m.UsageMetadata
			}
		}
		if usage == nil || usage.PromptTokenCount != 12 || usage.ResponseTokenCount != 3 || usage.TotalTokenCount != 15 {
			t.Errorf("usage = %+v", usage)
		}
		if gc := msgs[len(msgs)-2].ServerContent; gc == nil || !gc.GenerationComplete {
			t.Errorf("the turn does not end with generationComplete, turnComplete: %+v", msgs[len(msgs)-2])
		}
		got := srv.LiveMessages()
		if len(got) != 2 || got[0].Setup == nil || got[1].ClientContent == nil {
			t.Fatalf("recorded %d messages, want the setup and the turn", len(got))
		}
		if got[0].Model != liveModel || got[1].ClientContent.Turns[0].Parts[0].Text != "Hi" || !got[1].ClientContent.TurnComplete {
			t.Errorf("recorded %+v, %+v", got[0], got[1].ClientContent)
		}
		if got[0].Setup.GenerationConfig.ResponseModalities[0] != genai.ModalityText {
			t.Errorf("setup = %+v", got[0].Setup)
		}
		if got[0].Session == "" || got[1].Session != got[0].Session {
			t.Errorf("sessions %q, %q", got[0].Session, got[1].Session)
		}
	})
}

func TestLiveAudio(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		chunks := [][]byte{bytes.Repeat([]byte{1, 0}, 480), bytes.Repeat([]byte{2, 0}, 480)}
		srv.EnqueueLive(fake.LiveTurn(fake.LiveInputTranscription("what time is it", true),
			fake.LiveModelAudio(chunks[0]), fake.LiveModelAudio(chunks[1]), fake.LiveOutputTranscription("It is noon.", true)))
		sess := connect(t, client, audioModel, &genai.LiveConnectConfig{ResponseModalities: []genai.Modality{genai.ModalityAudio},
			InputAudioTranscription: &genai.AudioTranscriptionConfig{}, OutputAudioTranscription: &genai.AudioTranscriptionConfig{}})
		mic := &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: bytes.Repeat([]byte{0, 1}, 320)}
		for range 3 {
			if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{Audio: mic}); err != nil {
				t.Fatal(err)
			}
		}
		if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{AudioStreamEnd: true}); err != nil {
			t.Fatal(err)
		}
		var audio [][]byte
		var in, out string
		for _, m := range receiveTurn(t, sess) {
			sc := m.ServerContent
			if sc.ModelTurn != nil {
				b := sc.ModelTurn.Parts[0].InlineData
				if b.MIMEType != "audio/pcm;rate=24000" {
					t.Errorf("MIME type %q", b.MIMEType)
				}
				audio = append(audio, b.Data)
			}
			if sc.InputTranscription != nil {
				in = sc.InputTranscription.Text
			}
			if sc.OutputTranscription != nil {
				out = sc.OutputTranscription.Text
			}
		}
		if len(audio) != 2 || !bytes.Equal(audio[0], chunks[0]) || !bytes.Equal(audio[1], chunks[1]) {
			t.Errorf("got %d audio chunks, want the 2 sent", len(audio))
		}
		if in != "what time is it" || out != "It is noon." {
			t.Errorf("transcriptions %q, %q", in, out)
		}
		got := srv.LiveMessages()
		if len(got) != 5 || got[1].RealtimeInput.Audio == nil || !bytes.Equal(got[1].RealtimeInput.Audio.Data, mic.Data) ||
			!got[4].RealtimeInput.AudioStreamEnd {
			t.Errorf("recorded %d messages, want the setup, 3 audio chunks and the stream's end", len(got))
		}
	})
}

var weather = &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather"}}}

func TestLiveToolCallsByID(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(fake.LiveCalls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "London"})))
		// The reply function answers the tool response with what it says.
		srv.SetLiveReplyFunc(func(m *fake.LiveMessage) *fake.LiveReply {
			if m.ToolResponse == nil {
				return nil
			}
			var parts []string
			for _, r := range m.ToolResponse.FunctionResponses {
				parts = append(parts, r.ID+"="+r.Response["output"].(string))
			}
			return fake.LiveText(strings.Join(parts, ","))
		})
		sess := connect(t, client, liveModel, &genai.LiveConnectConfig{Tools: []*genai.Tool{weather}})
		if err := sess.SendClientContent(userTurn("Weather in Paris and London?")); err != nil {
			t.Fatal(err)
		}
		tc := receive(t, sess).ToolCall
		if tc == nil || len(tc.FunctionCalls) != 2 {
			t.Fatalf("toolCall = %+v, want 2 calls", tc)
		}
		a, b := tc.FunctionCalls[0], tc.FunctionCalls[1]
		if a.ID == "" || a.ID == b.ID || a.Args["city"] != "Paris" {
			t.Fatalf("calls %+v, %+v: want distinct ids", a, b)
		}
		// Answered in the other order, by id.
		err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
			{ID: b.ID, Name: "get_weather", Response: map[string]any{"output": "rain"}},
			{ID: a.ID, Name: "get_weather", Response: map[string]any{"output": "sun"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := text(receiveTurn(t, sess)), b.ID+"=rain,"+a.ID+"=sun"; got != want {
			t.Errorf("text = %q, want %q", got, want)
		}
		if rej := srv.LiveRejections(); len(rej) != 0 {
			t.Errorf("rejected: %+v", rej[0].Rejection)
		}
	})
}

// TestLiveToolCallsWithoutIDs: calls sent without ids, as Vertex AI's 2.5
// native-audio models send them, are answered without ids, each response
// taking the earliest unanswered call of its name; the turn goes on once
// both blocking calls are answered, and a response no id-less call waits
// for is refused.
func TestLiveToolCallsWithoutIDs(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(fake.LiveCalls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "London"})).WithoutCallIDs(),
			fake.LiveText("Both."))
		sess := connect(t, client, liveModel, &genai.LiveConnectConfig{Tools: []*genai.Tool{weather}})
		if err := sess.SendClientContent(userTurn("Weather in Paris and London?")); err != nil {
			t.Fatal(err)
		}
		tc := receive(t, sess).ToolCall
		if tc == nil || len(tc.FunctionCalls) != 2 || tc.FunctionCalls[0].ID != "" || tc.FunctionCalls[1].ID != "" {
			t.Fatalf("toolCall = %+v, want 2 calls without ids", tc)
		}
		for _, out := range []string{"sun", "rain"} { // one response at a time: the first blocks nothing yet
			err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
				{Name: "get_weather", Response: map[string]any{"output": out}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := text(receiveTurn(t, sess)); got != "Both." {
			t.Errorf("text = %q", got)
		}
		if rej := srv.LiveRejections(); len(rej) != 0 {
			t.Fatalf("rejected: %+v", rej[0].Rejection)
		}
		// A third response finds no id-less call waiting.
		err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
			{Name: "get_weather", Response: map[string]any{"output": "snow"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if ce := receiveClose(t, sess); ce.Code != fake.LiveInvalidArgument {
			t.Errorf("closed %d %q", ce.Code, ce.Text)
		}
		if rej := srv.LiveRejections(); len(rej) != 1 || rej[0].Rejection.Rule != "live-tool-response" {
			t.Errorf("rejections %+v", rej)
		}
	})
}

// TestLiveSetupFunc: the setup function answers setups in place of
// setupComplete: a resumed setup completes and is closed 1011, a new one
// is never completed, and the rest go on as usual.
func TestLiveSetupFunc(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		var setups atomic.Int32
		srv.SetLiveSetupFunc(func(m *fake.LiveMessage) *fake.LiveReply {
			switch n := setups.Add(1); {
			case n == 1:
				return nil // as usual
			case m.Setup.SessionResumption != nil && m.Setup.SessionResumption.Handle != "":
				return fake.LiveMessages(fake.LiveSetupComplete()).WithClose(fake.LiveInternalError, "Internal error encountered.")
			}
			return fake.LiveMessages() // never completed
		})
		srv.EnqueueLive(fake.LiveMessages(fake.LiveResumptionUpdate()))
		first := connect(t, client, liveModel, &genai.LiveConnectConfig{SessionResumption: &genai.SessionResumptionConfig{}})
		first.SendRealtimeInput(genai.LiveRealtimeInput{Text: "Hi"})
		handle := receive(t, first).SessionResumptionUpdate.NewHandle

		resumed := connect(t, client, liveModel, &genai.LiveConnectConfig{SessionResumption: &genai.SessionResumptionConfig{Handle: handle}})
		if resumed.SetupComplete == nil || (srv.LiveMessages()[0].Backend == genai.BackendVertexAI) != (resumed.SetupComplete.SessionID != "") {
			t.Errorf("setupComplete %+v", resumed.SetupComplete)
		}
		if ce := receiveClose(t, resumed); ce.Code != fake.LiveInternalError {
			t.Errorf("closed %d %q", ce.Code, ce.Text)
		}

		// A setup never completed: Connect waits until the server closes.
		done := make(chan error, 1)
		go func() {
			_, err := client.Live.Connect(context.Background(), liveModel, nil)
			done <- err
		}()
		for setups.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-done:
			t.Fatalf("Connect returned %v before the server closed", err)
		default:
		}
		srv.Close()
		if err := <-done; err == nil {
			t.Error("Connect succeeded")
		}
	})
}

func TestLiveCancellation(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(
			fake.LiveCalls(fake.Call("get_weather", nil)),
			// The user speaks over the model: every pending call is cancelled.
			fake.LiveMessages(fake.LiveInterrupted(), fake.LiveCancellation(), fake.LiveTurnComplete()),
			fake.LiveText("Sure, Rome then."),
		)
		sess := connect(t, client, liveModel, &genai.LiveConnectConfig{Tools: []*genai.Tool{weather}})
		sess.SendClientContent(userTurn("Weather?"))
		id := receive(t, sess).ToolCall.FunctionCalls[0].ID
		sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: "No, in Rome"})
		if m := receive(t, sess); m.ServerContent == nil || !m.ServerContent.Interrupted {
			t.Fatalf("got %+v, want interrupted", m)
		}
		cc := receive(t, sess).ToolCallCancellation
		if cc == nil || len(cc.IDs) != 1 || cc.IDs[0] != id {
			t.Fatalf("cancellation %+v, want the id %q", cc, id)
		}
		receiveTurn(t, sess)
		// A late response to the cancelled call is accepted and ignored.
		sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
			{ID: id, Name: "get_weather", Response: map[string]any{"output": "late"}}}})
		sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: "Rome?"})
		if got := text(receiveTurn(t, sess)); got != "Sure, Rome then." {
			t.Errorf("text = %q", got)
		}
		if rej := srv.LiveRejections(); len(rej) != 0 {
			t.Errorf("rejected: %+v", rej[0].Rejection)
		}
	})
}

func TestLiveNonBlocking(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		slow := &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "book", Behavior: genai.BehaviorNonBlocking}}}
		srv.EnqueueLive(
			// The model asks for the calls and goes on talking.
			fake.LiveMessages(fake.LiveToolCall(fake.Call("book", nil), fake.Call("book", nil)), fake.LiveModelText("Booking them now...")),
			fake.LiveText("Booked."),
		)
		sess := connect(t, client, liveModel, &genai.LiveConnectConfig{Tools: []*genai.Tool{slow}})
		sess.SendClientContent(userTurn("Book two tables"))
		calls := receive(t, sess).ToolCall.FunctionCalls
		if got := text([]*genai.LiveServerMessage{receive(t, sess)}); got != "Booking them now..." {
			t.Fatalf("text = %q", got)
		}
		respond := func(id string, scheduling genai.FunctionResponseScheduling, more bool) {
			t.Helper()
			r := &genai.FunctionResponse{ID: id, Name: "book", Response: map[string]any{"output": "ok"}, Scheduling: scheduling}
			if more {
				r.WillContinue = genai.Ptr(true)
			}
			if err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{r}}); err != nil {
				t.Fatal(err)
			}
		}
		if srv.LiveMessages()[0].Backend == genai.BackendGeminiAPI {
			// willContinue keeps the call open (genai refuses it on Vertex AI).
			respond(calls[0].ID, genai.FunctionResponseSchedulingSilent, true)
		}
		// SILENT responses only inform the model: they take no reply, so
		// the first one queued answers the WHEN_IDLE response.
		respond(calls[0].ID, genai.FunctionResponseSchedulingSilent, false)
		respond(calls[1].ID, genai.FunctionResponseSchedulingWhenIdle, false)
		if got := text(receiveTurn(t, sess)); got != "Booked." {
			t.Errorf("text = %q", got)
		}
		if rej := srv.LiveRejections(); len(rej) != 0 {
			t.Errorf("rejected: %+v", rej[0].Rejection)
		}
	})
}

func TestLiveGoAwayResumption(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(
			fake.LiveMessages(fake.LiveResumptionUpdate(), fake.LiveToolCall(fake.Call("get_weather", nil)),
				fake.LiveGoAway(50*time.Second)),
			fake.LiveText("Sunny."),
		)
		cfg := &genai.LiveConnectConfig{Tools: []*genai.Tool{weather}, SessionResumption: &genai.SessionResumptionConfig{}}
		first := connect(t, client, liveModel, cfg)
		first.SendClientContent(userTurn("Weather?"))
		handle := receive(t, first).SessionResumptionUpdate
		if handle == nil || !handle.Resumable || handle.NewHandle == "" {
			t.Fatalf("sessionResumptionUpdate = %+v, want a handle", handle)
		}
		id := receive(t, first).ToolCall.FunctionCalls[0].ID
		if ga := receive(t, first).GoAway; ga == nil || ga.TimeLeft != 50*time.Second {
			t.Fatalf("goAway = %+v, want 50s left", ga)
		}
		first.Close()

		// The resumed session still knows the call it asked for.
		second := connect(t, client, liveModel, &genai.LiveConnectConfig{Tools: []*genai.Tool{weather},
			SessionResumption: &genai.SessionResumptionConfig{Handle: handle.NewHandle}})
		err := second.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
			{ID: id, Name: "get_weather", Response: map[string]any{"output": "sun"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(receiveTurn(t, second)); got != "Sunny." {
			t.Errorf("text = %q", got)
		}
		msgs := srv.LiveMessages()
		last := msgs[len(msgs)-1]
		if last.ToolResponse == nil || last.Session != msgs[0].Session || last.Conn == msgs[0].Conn {
			t.Errorf("the response was recorded in session %q on connection %d, want session %q on a new connection",
				last.Session, last.Conn, msgs[0].Session)
		}

		// A handle the server did not issue is refused.
		_, err = client.Live.Connect(context.Background(), liveModel, &genai.LiveConnectConfig{
			SessionResumption: &genai.SessionResumptionConfig{Handle: "not-a-handle"}})
		if ce := closeError(t, err); ce.Code != fake.LivePolicyViolation || ce.Text != "BidiGenerateContent session not found" {
			t.Errorf("closed %d %q", ce.Code, ce.Text)
		}
	})
}

// TestLiveRefusals makes each refusal through genai and checks the close
// code and reason the client sees.
func TestLiveRefusals(t *testing.T) {
	const invalid = "Request contains an invalid argument."
	type exchange func(t *testing.T, client *genai.Client) error
	connectErr := func(model string, cfg *genai.LiveConnectConfig) exchange {
		return func(t *testing.T, client *genai.Client) error {
			sess, err := client.Live.Connect(context.Background(), model, cfg)
			if err == nil {
				sess.Close()
				t.Fatal("Connect succeeded")
			}
			return err
		}
	}
	after := func(model string, send func(*genai.Session) error) exchange {
		return func(t *testing.T, client *genai.Client) error {
			sess := connect(t, client, model, nil)
			if err := send(sess); err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := sess.Receive(); err != nil {
					return err
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		rule   string
		do     exchange
		code   int
		reason func(backend genai.Backend) string
	}{
		{"unknown model", "live-model", connectErr("gemini-2.5-flash", nil), fake.LivePolicyViolation, func(b genai.Backend) string {
			if b == genai.BackendVertexAI {
				return "Publisher Model `projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-flash` was not found or yo"
			}
			return "models/gemini-2.5-flash is not found for API version v1beta, or is not supported for bidiGenerateContent. Call ListModels t"
		}},
		{"text from a native-audio model", "live-response-modalities",
			connectErr(audioModel, &genai.LiveConnectConfig{ResponseModalities: []genai.Modality{genai.ModalityText}}),
			fake.LiveInvalidArgument, func(genai.Backend) string { return "Cannot extract voices from a non-audio request." }},
		{"media chunks", "live-media-chunks", after(liveModel, func(s *genai.Session) error {
			return s.SendRealtimeInput(genai.LiveRealtimeInput{Media: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: []byte{0, 0}}})
		}), fake.LiveInvalidArgument, func(genai.Backend) string {
			return "realtime_input.media_chunks is deprecated. Use audio, video, or text instead."
		}},
		{"wrong audio format", "live-audio-format", after(liveModel, func(s *genai.Session) error {
			return s.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: "audio/wav", Data: []byte{0, 0}}})
		}), fake.LiveInvalidArgument, func(genai.Backend) string { return invalid }},
		{"tool response for an unknown id", "live-tool-response", after(liveModel, func(s *genai.Session) error {
			return s.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
				{ID: "fc-404", Name: "get_weather", Response: map[string]any{"output": 1}}}})
		}), fake.LiveInvalidArgument, func(genai.Backend) string { return invalid }},
		{"tool response without an id, for no id-less call", "live-tool-response", after(liveModel, func(s *genai.Session) error {
			return s.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
				{Name: "get_weather", Response: map[string]any{"output": 1}}}})
		}), fake.LiveInvalidArgument, func(genai.Backend) string { return invalid }},
		{"unknown resumption handle", "live-resumption-handle", connectErr(liveModel, &genai.LiveConnectConfig{
			SessionResumption: &genai.SessionResumptionConfig{Handle: "h"}}),
			fake.LivePolicyViolation, func(genai.Backend) string { return "BidiGenerateContent session not found" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
				err := tc.do(t, client)
				ce := closeError(t, err)
				backend := genai.BackendGeminiAPI
				if rej := srv.LiveRejections(); len(rej) == 1 {
					backend = rej[0].Backend
					if rej[0].Rejection.Rule != tc.rule {
						t.Errorf("refused by %q, want %q", rej[0].Rejection.Rule, tc.rule)
					}
				} else {
					t.Errorf("%d rejections, want 1", len(rej))
				}
				if want := tc.reason(backend); ce.Code != tc.code || ce.Text != want {
					t.Errorf("closed %d %q, want %d %q", ce.Code, ce.Text, tc.code, want)
				}
			})
		})
	}
}

// TestLiveAuth: a handshake without credentials is refused before the
// upgrade, with generateContent's errors.
func TestLiveAuth(t *testing.T) {
	srv := newServer(t)
	cfg := srv.LiveVertexClientConfig()
	cfg.HTTPOptions.Headers = nil // genai's Live client then sends no token
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Live.Connect(context.Background(), liveModel, nil); !errors.Is(err, websocket.ErrBadHandshake) {
		t.Errorf("Connect without a token: %v, want a refused handshake", err)
	}
	url := strings.Replace(srv.URL, "http://", "ws://", 1) + "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	_, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if !errors.Is(err, websocket.ErrBadHandshake) || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Dial without a key: %v, %v; want 403", err, resp)
	}
	resp.Body.Close()
	rej := srv.LiveRejections()
	if len(rej) != 2 || rej[0].Rejection.Code != http.StatusUnauthorized || rej[1].Rejection.Code != http.StatusForbidden {
		t.Errorf("rejections %+v", rej)
	}
	// Any key is taken, in the header or the key query parameter, and an
	// ephemeral token on the constrained route.
	for _, d := range []struct {
		path   string
		header http.Header
	}{
		{"?key=k", nil},
		{"", http.Header{"X-Goog-Api-Key": {"k"}}},
	} {
		ws, _, err := websocket.DefaultDialer.Dial(url+d.path, d.header)
		if err != nil {
			t.Fatalf("Dial %s: %v", d.path, err)
		}
		ws.Close()
	}
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(url, "BidiGenerateContent", "BidiGenerateContentConstrained", 1),
		http.Header{"Authorization": {"Token auth_tokens/abc"}})
	if err != nil {
		t.Fatalf("Dial with an ephemeral token: %v", err)
	}
	ws.Close()
}

// TestLiveUnscripted: a turn nothing answers ends the session with a
// readable reason rather than a wait.
func TestLiveUnscripted(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		sess := connect(t, client, liveModel, nil)
		sess.SendClientContent(userTurn("Hi"))
		ce := receiveClose(t, sess)
		if ce.Code != fake.LiveInternalError || ce.Text != "fake: no reply scripted for live message #2" {
			t.Errorf("closed %d %q", ce.Code, ce.Text)
		}
		if m := srv.LiveMessages(); !m[1].Unscripted {
			t.Error("the message is not marked unscripted")
		}
	})
}

// TestLiveCloseEndsSessions: Close ends the connections in flight, whose
// goroutines then end (TestMain checks for leaks).
func TestLiveCloseEndsSessions(t *testing.T) {
	srv := fake.NewServer()
	client, err := genai.NewClient(context.Background(), srv.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, client, liveModel, nil)
	srv.Close()
	if _, err := sess.Receive(); err == nil {
		t.Fatal("Receive succeeded after Close")
	}
}

// TestLiveReplyClose: a reply may end the connection as the service does
// at a session's limit.
func TestLiveReplyClose(t *testing.T) {
	liveBackends(t, func(t *testing.T, srv *fake.Server, client *genai.Client) {
		srv.EnqueueLive(fake.LiveMessages(fake.LiveModelText("Hel")).WithClose(fake.LiveInternalError,
			"Deadline expired before operation could complete."))
		sess := connect(t, client, liveModel, nil)
		sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: "Hi"})
		if got := text([]*genai.LiveServerMessage{receive(t, sess)}); got != "Hel" {
			t.Errorf("text = %q", got)
		}
		if ce := receiveClose(t, sess); ce.Code != 1011 || ce.Text != "Deadline expired before operation could complete." {
			t.Errorf("closed %d %q", ce.Code, ce.Text)
		}
	})
}
