package fake

import (
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// liveRules are the checks every message of a Live session passes before it
// is answered, in order, as [rules] are for generateContent: the first that
// fails closes the connection with its close code and reason, recorded in
// a [LiveRejection] named after it; each says what backs it, verified (a
// public report of the real service, a document, or genai's source,
// google.golang.org/genai@v1.77.0, file:line) or assumed. The sources are
// gathered in ../shared/notes/live.md. "live-auth" runs at the handshake,
// before the upgrade, and answers as generateContent's "auth" does.
//
// To add a rule, write its check and add it here, with a passing and a
// failing case in liveRuleCases (live_test.go), which TestLiveRules
// requires.
var liveRules = []liveRule{
	{name: "live-auth", // checked by serveLive at the handshake
		verified: "the Gemini API takes the key in x-goog-api-key, an ephemeral token as \"Authorization: Token " +
			"auth_tokens/…\" on BidiGenerateContentConstrained, Vertex AI a bearer token (genai live.go:75-121).",
		assumed: "credentials are checked before the upgrade and refused with generateContent's HTTP errors (the rule " +
			"\"auth\"): no source shows the service refusing a Live handshake; any non-empty key or token is valid."},
	{name: "live-json", check: checkLiveJSON,
		verified: "a client message sets one of setup, clientContent, realtimeInput, toolResponse and contextUpdate " +
			"(genai types.go:8602-8614, BidiGenerateContentClientMessage at https://ai.google.dev/api/live).",
		assumed: "a message that is not JSON, sets another field or more than one is closed 1007 with proto JSON's " +
			"\"Invalid JSON payload received.\" texts; fields below the top level are not checked."},
	{name: "live-setup-first", check: checkLiveSetupFirst,
		assumed: "a message before the setup is closed 1007 \"Request contains an invalid argument.\" (no source " +
			"found; ../shared/notes/live.md section 5)."},
	{name: "live-setup-once", check: checkLiveSetupOnce,
		verified: "a second setup is closed 1007 \"Request contains an invalid argument.\" (BerriAI/litellm#31494)."},
	{name: "live-model", check: checkLiveModel,
		verified: "a model the Live API does not serve is closed 1008 before setupComplete, text verified for the " +
			"Gemini API: \"models/X is not found for API version v1beta, or is not supported for bidiGenerateContent.\" " +
			"(livekit/agents#4414, google/adk-python#3964); on Vertex AI 1008 \"Publisher Model `projects/…` was not " +
			"found\" (google/adk-python#3314). The setup's model is \"models/X\" on the Gemini API and " +
			"\"projects/P/locations/L/publishers/google/models/M\" on Vertex AI (genai transformer.go:115-132).",
		assumed: "the Live models are those whose name has \"live\" or \"native-audio\" in it (gemini-3.8-live, " +
			"gemini-3.1-flash-live-preview, gemini-2.5-flash-native-audio-preview-12-2025, " +
			"gemini-live-2.5-flash-native-audio: ../shared/notes/live.md section 2); the Vertex AI text after " +
			"\"was not found\"."},
	{name: "live-resumption-handle", check: checkLiveHandle,
		verified: "a resumed session is named by the latest handle of a sessionResumptionUpdate " +
			"(genai types.go:8251-8271); all of the setup but the model may change on resume " +
			"(https://ai.google.dev/api/live); 1008 \"BidiGenerateContent session not found\" (yeyu2/Youtube_demos#5).",
		assumed: "that 1008 is the answer to a handle the server did not issue; a resume with another model is " +
			"closed 1007 \"Request contains an invalid argument.\"; handles are kept until the server closes " +
			"(the Gemini API keeps them 2 hours after the session ends)."},
	{name: "live-response-modalities", check: checkLiveModalities,
		verified: "TEXT responses from a native-audio model are closed 1007 \"Cannot extract voices from a non-audio " +
			"request.\" (googleapis/java-genai#803)."},
	{name: "live-media-chunks", check: checkLiveMediaChunks,
		verified: "realtimeInput.mediaChunks, what genai sends for LiveRealtimeInput.Media (live_converters.go:885-940), " +
			"is closed 1007 \"realtime_input.media_chunks is deprecated. Use audio, video, or text instead.\" by " +
			"Gemini 3 models (kizuna-ai-lab/sokuji#150, mastra-ai/mastra#18287).",
		assumed: "that Gemini 2.5 models still take it."},
	{name: "live-audio-format", check: checkLiveAudioFormat,
		verified: "audio in is raw 16-bit little-endian PCM, \"audio/pcm;rate=16000\", and the service resamples " +
			"other rates (https://ai.google.dev/gemini-api/docs/live-guide; docs.cloud.google.com/vertex-ai/" +
			"generative-ai/docs/live-api/send-audio-video-streams); bare \"audio/pcm\" is accepted " +
			"(mastra-ai/mastra#23722).",
		assumed: "audio of another MIME type (audio/wav, audio/mpeg…), a rate that is not a positive integer, and " +
			"audio without data are closed 1007 \"Request contains an invalid argument.\" (no source found)."},
	{name: "live-tool-response", check: checkLiveToolResponse,
		verified: "a toolResponse answers the calls of a toolCall by id (genai types.go:1498-1523, 8140-8160); " +
			"Vertex AI's 2.5 native-audio models send calls without ids (googleapis/js-genai#1210) and take " +
			"responses without them (livekit/agents#2194); a response to a call without an id is matched on its " +
			"name, and responses go in call order (../shared/gemini-wire.md sections 6.1 and 6.2).",
		assumed: "a response without an id answers the earliest unanswered id-less call of its name, and one no " +
			"such call waits for is closed 1007 \"Request contains an invalid argument.\"; " +
			"a response whose id is no call the server sent, one already answered, or one answered twice in a message, is closed 1007 " +
			"\"Request contains an invalid argument.\" (no source found: ../shared/notes/live.md section 5); a " +
			"response for a call the server cancelled is accepted and ignored, since no source says it is an error " +
			"and a client cannot avoid the race; a NON_BLOCKING call answered with willContinue stays open."},
}

// liveRule is one check of [liveRules].
type liveRule struct {
	name string
	// check is nil for "live-auth", which serveLive runs at the handshake.
	check func(*liveInput) *liveRefusal
	// verified and assumed say what backs the rule; see [rules].
	verified, assumed string
}

// liveRefusal is the close code and reason a rule refuses a message with.
type liveRefusal struct {
	code   int
	reason string
}

// invalidLive is the service's usual refusal: 1007 "Request contains an
// invalid argument." (../shared/notes/live.md section 5).
func invalidLive() *liveRefusal {
	return &liveRefusal{code: LiveInvalidArgument, reason: "Request contains an invalid argument."}
}

// liveInput is what the Live rules look at. Rules fill msg, model, resumed
// and endsTurn for the rules after them and for the server.
type liveInput struct {
	conn    *liveConn
	raw     []byte
	handles func(string) (*liveSession, bool)

	msg      *liveWire    // set by "live-json"
	model    string       // the setup's model without its prefix; set by "live-model"
	resumed  *liveSession // the session a setup resumes; set by "live-resumption-handle"
	endsTurn bool         // the message ends a user turn; set by "live-json" and "live-tool-response"
}

// checkLive runs the rules on in and returns the first failure, or nil.
func checkLive(in *liveInput) *LiveRejection {
	for _, r := range liveRules {
		if r.check == nil {
			continue
		}
		if f := r.check(in); f != nil {
			return &LiveRejection{Rule: r.name, Code: f.code, Reason: cutReason(f.reason)}
		}
	}
	return nil
}

// session returns the session the message belongs to, nil before a setup.
func (in *liveInput) session() *liveSession {
	return in.conn.sess
}

func checkLiveJSON(in *liveInput) *liveRefusal {
	w, reason := decodeLive(in.raw)
	if reason != "" {
		return &liveRefusal{code: LiveInvalidArgument, reason: reason}
	}
	in.msg = w
	switch {
	case w.ClientContent != nil:
		in.endsTurn = w.ClientContent.TurnComplete
	case w.RealtimeInput != nil:
		ri := w.RealtimeInput
		in.endsTurn = ri.Text != "" || ri.ActivityEnd != nil || ri.AudioStreamEnd
	}
	return nil
}

func checkLiveSetupFirst(in *liveInput) *liveRefusal {
	if in.conn.setups == 0 && in.msg.Setup == nil {
		return invalidLive()
	}
	return nil
}

func checkLiveSetupOnce(in *liveInput) *liveRefusal {
	if in.conn.setups > 0 && in.msg.Setup != nil {
		return invalidLive()
	}
	return nil
}

var (
	liveGeminiModel = regexp.MustCompile(`^models/([^/]+)$`)
	liveVertexModel = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/publishers/google/models/([^/]+)$`)
)

func checkLiveModel(in *liveInput) *liveRefusal {
	if in.msg.Setup == nil {
		return nil
	}
	name := in.msg.Setup.Model
	if in.conn.backend == genai.BackendVertexAI {
		m := liveVertexModel.FindStringSubmatch(name)
		if m == nil || !isLiveModel(m[1]) {
			return &liveRefusal{code: LivePolicyViolation, reason: fmt.Sprintf("Publisher Model `%s` was not found "+
				"or your project does not have access to it.", name)}
		}
		in.model = m[1]
		return nil
	}
	m := liveGeminiModel.FindStringSubmatch(name)
	if m == nil || !isLiveModel(m[1]) {
		return &liveRefusal{code: LivePolicyViolation, reason: fmt.Sprintf("%s is not found for API version %s, "+
			"or is not supported for bidiGenerateContent. Call ListModels to see the list of available models and "+
			"their supported methods.", name, in.conn.version)}
	}
	in.model = m[1]
	return nil
}

// isLiveModel reports whether the Live API serves the model (the rule
// "live-model").
func isLiveModel(short string) bool {
	return strings.Contains(short, "live") || strings.Contains(short, "native-audio")
}

func checkLiveHandle(in *liveInput) *liveRefusal {
	if in.msg.Setup == nil || in.msg.Setup.SessionResumption == nil || in.msg.Setup.SessionResumption.Handle == "" {
		return nil
	}
	sess, ok := in.handles(in.msg.Setup.SessionResumption.Handle)
	if !ok || sess.backend != in.conn.backend {
		return &liveRefusal{code: LivePolicyViolation, reason: "BidiGenerateContent session not found"}
	}
	if sess.model != in.msg.Setup.Model {
		return invalidLive()
	}
	in.resumed = sess
	return nil
}

func checkLiveModalities(in *liveInput) *liveRefusal {
	s := in.msg.Setup
	if s == nil || !strings.Contains(in.model, "native-audio") || s.GenerationConfig == nil {
		return nil
	}
	for _, m := range s.GenerationConfig.ResponseModalities {
		if m == genai.ModalityText {
			return &liveRefusal{code: LiveInvalidArgument, reason: "Cannot extract voices from a non-audio request."}
		}
	}
	return nil
}

func checkLiveMediaChunks(in *liveInput) *liveRefusal {
	ri := in.msg.RealtimeInput
	if ri == nil || len(ri.MediaChunks) == 0 || !strings.HasPrefix(in.session().short, "gemini-3") {
		return nil
	}
	return &liveRefusal{code: LiveInvalidArgument,
		reason: "realtime_input.media_chunks is deprecated. Use audio, video, or text instead."}
}

func checkLiveAudioFormat(in *liveInput) *liveRefusal {
	ri := in.msg.RealtimeInput
	if ri == nil {
		return nil
	}
	blobs := append([]*genai.Blob{ri.Audio}, ri.MediaChunks...)
	for _, b := range blobs {
		if b == nil || (b != ri.Audio && !strings.HasPrefix(b.MIMEType, "audio/")) {
			continue
		}
		if !isPCM(b.MIMEType) || len(b.Data) == 0 {
			return invalidLive()
		}
	}
	return nil
}

// isPCM reports whether mimeType is the Live API's audio in: audio/pcm,
// with a rate that is a positive integer when it has one.
func isPCM(mimeType string) bool {
	t, params, err := mime.ParseMediaType(mimeType)
	if err != nil || t != "audio/pcm" {
		return false
	}
	rate, ok := params["rate"]
	if !ok {
		return true
	}
	n, err := strconv.Atoi(rate)
	return err == nil && n > 0
}

func checkLiveToolResponse(in *liveInput) *liveRefusal {
	tr := in.msg.ToolResponse
	if tr == nil {
		return nil
	}
	sess := in.session()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	seen := map[string]bool{}
	anon := slices.Clone(sess.anon) // the id-less calls the message's id-less responses have left
	for _, r := range tr.FunctionResponses {
		if r == nil {
			return invalidLive()
		}
		if r.ID == "" {
			i := anonCall(anon, r.Name)
			if i < 0 {
				return invalidLive()
			}
			anon = slices.Delete(anon, i, i+1)
			continue
		}
		if seen[r.ID] {
			return invalidLive()
		}
		seen[r.ID] = true
		if _, ok := sess.pending[r.ID]; !ok && !sess.cancelled[r.ID] {
			return invalidLive()
		}
	}
	answeredBlocking, wake := false, false
	for _, r := range tr.FunctionResponses {
		var call pendingCall
		var ok bool
		if r.ID == "" {
			i := anonCall(sess.anon, r.Name)
			call, ok = sess.anon[i], true
			if call.blocking || r.WillContinue == nil || !*r.WillContinue {
				sess.anon = slices.Delete(sess.anon, i, i+1)
			}
		} else if call, ok = sess.pending[r.ID]; ok && (call.blocking || r.WillContinue == nil || !*r.WillContinue) {
			sess.resolve(r.ID)
		}
		if !ok {
			continue // cancelled: ignored
		}
		if call.blocking {
			answeredBlocking = true
		} else if r.Scheduling != genai.FunctionResponseSchedulingSilent {
			wake = true
		}
	}
	in.endsTurn = wake || (answeredBlocking && !sess.blockingLeft())
	return nil
}

// anonCall returns the index in calls of the earliest call named name,
// -1 if there is none: a response without an id answers it.
func anonCall(calls []pendingCall, name string) int {
	return slices.IndexFunc(calls, func(c pendingCall) bool { return c.name == name })
}
