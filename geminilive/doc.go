// Package geminilive runs a live session of an agent on Gemini's Live API
// (genai's client.Live): a bidirectional session over a websocket in which
// the program sends text, audio and video as the user produces them, and
// the model answers in audio (or text) and calls the agent's tools while it
// talks.
//
//	s, err := geminilive.Connect(ctx, client, a, geminilive.Config{})
//	…
//	defer s.Close()
//	go func() { for chunk := range mic { s.SendAudio(chunk) } }() // 16 kHz PCM
//	for e, err := range s.Events() {
//		… // e.Kind: EventAudio (24 kHz PCM), EventOutputTranscript, EventApproval…
//	}
//
// # The setup
//
// [Connect] sets the session up from the agent: its model (a Live model,
// such as gemini-3.8-live or gemini-2.5-flash-native-audio-preview-12-2025),
// the system instruction, generation settings (temperature, topP, topK,
// maxOutputTokens, seed, thinking, speech, safety, media resolution) and
// tools of its Config.GenerateConfig, its tools' declarations as the loop
// sends them (geminiadapter), and its BuiltinTools. [Config] adds what is
// Live's own: the response modalities (audio unless said otherwise), the
// voice, transcription of both sides (on unless Config.NoTranscription),
// voice activity detection (Config.RealtimeInput), context-window
// compression (Config.Compression: off by default, so the service's limits
// hold: about 15 minutes of audio, 2 of audio and video, in a 128k-token
// window), session resumption (on unless Config.NoResumption), and which
// tools are NON_BLOCKING (Config.NonBlocking; the others are BLOCKING).
//
// # Tool calls
//
// A toolCall's calls run through the agent's own code for tools
// ([agent.Steps]: PlanCall, RunCall, NotApproved, Observe): arguments are
// validated, errors and panics go back to the model as error results,
// calls past Config.MaxCallsPerTurn and to unknown tools are answered as
// the loop answers them, each call runs under Config.ToolTimeout after
// Config.Intercept, at most Config.MaxParallel calls run at once, outputs
// are capped at Config.MaxOutputBytes, and the agent's Observer (otelagent's
// spans) sees EventToolCall, EventToolProgress and EventToolResult for each
// (not EventApproval, nor run or model events: a live session has no
// turns of the loop). Each call's response is sent, alone, as soon as the
// call finishes, with its id (for calls without one, see below); every
// write to the connection is serialized
// (genai's Session is not safe for concurrent sends). A NON_BLOCKING
// call's response carries Config.Scheduling (INTERRUPT, WHEN_IDLE or
// SILENT); the model goes on talking while it runs.
//
// Some models send calls without ids (Vertex AI's 2.5 native-audio
// models: ../shared/notes/live.md section 3, googleapis/js-genai#1210).
// Such a call gets an id of the session's own ("geminilive-1", unique in
// the session): the events name it by that id, and [Session.Decide] and
// the agent's observer take it. Its response is sent without an id, as
// the service takes them (livekit/agents#2194), which then matches it to
// the call by name and order (../shared/gemini-wire.md sections 6.1 and
// 6.2: responses in call order, matched on name when the call had no id):
// the responses of a toolCall's id-less calls are sent in call order, one
// held back until the earlier ones are answered, with them. Such calls
// cannot be named by a toolCallCancellation.
//
// A call the agent's Config.NeedsApproval picks waits: the session yields
// [EventApproval], and the program answers with [Session.Decide]: approved,
// the call runs (Intercept is not asked); denied, the model is told the
// tool was not run. A toolCallCancellation (the user spoke over the model)
// cancels the context of each call it names, with cause [ErrCancelled]
// (a call waiting for approval is dropped), yields [EventToolCancelled],
// and sends nothing for it; a tool should return when its context is
// done, and what it returns is not sent.
//
// # Opening and closing
//
// [Connect] honours its context, and Config.SetupTimeout (30 seconds)
// bounds each connection's opening, Connect's and every reconnection's:
// the dial, the websocket handshake and the wait for the service's
// setupComplete. When either ends first, Connect returns an error that
// wraps the context's (context.DeadlineExceeded, context.Canceled), and no
// connection is left open. genai's Live.Connect ignores its context (it
// dials with websocket.DefaultDialer and waits for setupComplete with no
// deadline), so a session's client dials a tunnel of the session's own, on
// loopback, which opens the connection to the service with the context
// (through the proxy the environment names, as genai would) and then
// copies the websocket's bytes both ways unchanged; the setup, the
// messages and their conversion stay genai's.
//
// [Session.Close] returns promptly whatever the session is doing
// (reading, handing events to a consumer that stopped reading, waiting
// between reconnections, opening a connection), and when it returns no
// goroutine and no connection of the session is left, and none opens
// after it: breaking out of Events and closing, the common pattern, is
// safe at any time. A tool that does not return when its context is
// cancelled is left to finish on its own goroutine (toolset's rule), and
// its result is not sent.
//
// # Resumption
//
// The session keeps the latest resumption handle the service gave
// ([Session.Handle]). On a goAway it reconnects with it (with no handle
// yet, the connection serves until the service ends it); when the
// connection is lost otherwise (closed abnormally, or with 1011), it does
// the same. A reconnection that fails (the dial, the handshake, or the
// setup refused or not completed within Config.SetupTimeout) is tried
// again. The reconnections in a row that lead to no model turn (no
// content, transcription or tool call came since) are counted: the first
// is made at once, each after it waits Config.ReconnectDelay (500 ms),
// twice as long each time up to [MaxReconnectDelay], each wait moved at
// random by up to half of itself; after Config.MaxReconnects (3) the
// session ends with an error that wraps [ErrTooManyReconnects] and the
// last connection's error. A setupComplete is not a turn: a service that
// resumes the session and closes it at once, forever, is given up on
// after MaxReconnects reconnections. A connection that lasted
// [StableConnection] (a minute) also starts a new count, so that a quiet
// session lives through the service's goAways. A connection the service
// closed with 1007 or 1008 (it refused what was sent, or the session or
// model is not found) is not resumed. While it reconnects (its waits
// included), sends wait for the new connection. No tool call is lost or
// repeated: a call running across the reconnection answers on the new
// connection (the
// service keeps the session's pending calls), a response the old
// connection did not take is sent on the new one, and a call answered
// before is never run again. The session yields [EventGoAway] and
// [EventReconnected]. A session that cannot be resumed (no handle yet,
// resumption off, a refusal, MaxReconnects reached) ends: Events yields the
// error, which wraps the *websocket.CloseError (github.com/gorilla/websocket)
// the service closed with, the calls running are cancelled, and later
// sends return [ErrClosed].
//
// # Events
//
// [Session.Events] yields the session's events in order, until
// [Session.Close] (or Connect's ctx ending), or a failure. It has one
// consumer, which must keep reading: the session's messages wait for it
// (up to 64 events are buffered). A call's [EventToolResult] comes before
// the model's answer to it.
//
// # Limits and what is not done yet
//
// The service sends no new handle while the model generates or calls
// tools (its updates then say resumable:false), so the handle a
// reconnection uses may predate a call still running; the fake keeps such
// calls pending across the resumption, but whether the service does is not
// documented. After a goAway the old connection is closed at once: a
// response sent on it in the moment before, and the model's answer to it,
// may be lost. A response the service took just before the connection dropped, but for
// which no acknowledgement came, may not have reached the model: without
// Vertex AI's transparent resumption (lastConsumedClientMessageIndex,
// not used) there is no way to know, and it is not sent again. The
// responses of the calls of one toolCall are sent one by one, not
// together (but those of id-less calls held back for an earlier one).
// NON_BLOCKING calls answer once (no willContinue). Usage comes
// as EventUsage; nothing sums it. Audio is passed through as it comes:
// no resampling, no buffering. Package agentserver/live serves sessions
// to browsers over a websocket (with a voice mode in the dev UI); the
// chat's -live (examples/chat) uses a session in a terminal.
package geminilive
