// Package live serves voice sessions of an [agentserver.Server]'s agent to
// browsers: a websocket route where the page streams its microphone and
// plays the model's answer, while the agent's tools run on the server
// (package geminilive, on Gemini's Live API). The key stays on the server;
// the browser speaks only to this route.
//
//	h, err := live.New(srv, live.Config{Client: client, Agent: voiceAgent})
//	…
//	mux.Handle("/live", h)
//	…
//	h.Close(ctx) // before srv.Close
//
// The agent (Config.Agent, the server's by default) must be on a Live
// model, such as gemini-3.8-live or
// gemini-2.5-flash-native-audio-preview-12-2025; the server's text agent
// and the voice agent can share their tools (toolset.Set) and approvals.
//
// # Opening a session
//
// A page opens ws(s)://host/live?thread=ID. The request is refused with
// the server's JSON errors before it is upgraded: the same authentication
// as the server's other routes (Config.Authenticate: 401, and its
// loopback-only rule without it), a thread id that is not one (400), a
// page whose origin may not ([agentserver.Server.OriginAllowed]: the
// server's own origin and Config.AllowedOrigins; 403 bad_origin), a
// thread with a run in progress (409) or a new thread over the user's
// quota (429), a thread with a live session already (409), a user with
// Config.MaxSessionsPerUser sessions open (429 too_many_sessions), the
// server at Config.MaxSessions (503), a request that is not a websocket
// upgrade (400). A thread belongs to its user as the server's threads
// do: another user's thread of the same id is another thread.
//
// Once upgraded, the route opens the model's session, within
// Config.Session.SetupTimeout (geminilive's, 30 seconds by default: the
// dial, the handshake and the service's setupComplete), then sends
// "ready". A browser that leaves during the setup, or [Handler.Close],
// ends it at once; what the page sends before "ready" (a microphone
// streams at once) reaches the model once the session is open, in order
// (up to 256 KiB of it; beyond, the route reads no more until then).
//
// # The messages
//
// Audio goes in binary frames, raw: the browser sends 16-bit
// little-endian mono PCM at 16 kHz (audio/pcm;rate=16000), the server
// sends the model's speech as 16-bit little-endian mono PCM at 24 kHz.
// Everything else is a JSON [Message] in a text frame. The browser sends:
//
//	{"type":"text","text":"…"}                 a typed turn
//	{"type":"audio_end"}                        the microphone was turned off
//	{"type":"decide","id":"…","approved":true}  a decision on an approval
//	{"type":"ping"}                             nothing, but the session is not idle
//
// The server sends "ready" first (thread, audio_in, audio_out), then
// as they happen: "input_transcript" and "output_transcript" (text,
// finished), "text" (a model that answers in text), "tool_call" (id,
// name, args), "approval" (a call that waits for "decide"), "tool_result"
// (id, name, output as JSON cut at 8 KiB, is_error), "tool_cancelled"
// (the user spoke over the model: nothing was sent for the call),
// "interrupted" (the player drops what it has not played), "turn_complete",
// and "error" (code, message) for what does not end the session: a
// decision for a call that waits for none (unknown_call), a transcript
// that could not be saved.
//
// A call the agent's NeedsApproval picks waits for the browser's
// decision, for the server's Config.ApprovalTimeout at most: then it is
// denied, and the model told so. A call the model sent without an id
// (Vertex AI's 2.5 native-audio models) has an id of its own
// ("geminilive-N") in "tool_call", "approval", "tool_result" and
// "decide". The tools see the user in their context
// ([agentserver.RunUser]), as in the server's runs.
//
// # The transcript
//
// Each turn's transcript is appended to the thread when the model's turn
// completes (and what is left of it when the session ends): the user's
// words (the input transcription, and typed text) as a user content, the
// model's (its output transcription, or text) as a model content; audio
// and tool calls are not kept. A later text run on the thread sees the
// conversation. A transcript that cannot be saved (a text run started on
// the thread meanwhile: 409, the user over their quota) is logged, and
// the browser told ("error", not_saved, busy or thread_quota…).
//
// # How a session ends
//
// The websocket is closed with a code and a reason that starts with a
// stable code:
//
//   - 1000: the browser closed it (its transcript is saved);
//   - 1001 "closing": [Handler.Close] (a deploy);
//   - 1007 "bad_message: …": a text frame that is not one of the
//     browser's messages (not JSON, an unknown type or field, an empty
//     text); "bad_audio: …": a binary frame that is not raw 16-bit PCM
//     (empty, an odd number of bytes, a WAV, Ogg, WebM, MP3 or FLAC file:
//     MediaRecorder's output is not taken);
//   - 1008 "idle: …": nothing received for Config.IdleTimeout;
//     "duration_limit: …": the session lasted Config.MaxDuration;
//   - 1009: a frame over Config.MaxMessageBytes;
//   - 1011 "model_error: …": the model's session could not be opened
//     (refused, or not set up within Config.Session.SetupTimeout), or
//     was lost and could not be resumed (geminilive resumes it after a
//     goAway or a dropped connection first, Config.Session.MaxReconnects
//     times in a row without a model turn at most); the error is logged,
//     not shown.
//
// A browser that vanishes, or reads nothing for the server's
// Config.WriteTimeout, ends its session too. Whatever ends a session (also
// during the model's setup, or while it reconnects), the model's session
// is closed and its calls cancelled (a tool that outlives its
// cancellation is left to finish on its own goroutine, and its result is
// not sent), no goroutine or connection of the session is left, and the
// thread and the user's session slot are free again.
//
// # Limits
//
// The route does not resample: a page captures at 16 kHz
// (AudioContext({sampleRate: 16000}) does it) and plays at 24 kHz.
// Sessions are counted per process: several servers behind a balancer
// each apply the limits. A text run may start on a thread while a live
// session is open on it (the session's transcript is then refused until
// the run ends).
package live
