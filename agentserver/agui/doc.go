// Package agui serves an [agentserver.Server] over AG-UI 1.0, the
// protocol of CopilotKit and most agent UIs: a POST of RunAgentInput
// answered with server-sent events.
//
//	srv, _ := agentserver.New(agentserver.Config{Agent: a})
//	http.Handle("/agui", agui.Handler(srv))
//	http.Handle("/agui/", agui.Handler(srv)) // POST /agui/connect: reconnect
//
// On the client, @ag-ui/client's HttpAgent:
//
//	const agent = new HttpAgent({ url: '/agui', threadId })
//	agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: 'Weather in Paris?' })
//	await agent.runAgent({ tools }, subscriber)
//
// # Requests
//
// RunAgentInput's threadId names the thread and runId the AG-UI run (the
// events echo it); protocolVersion, when sent, must be of major version 1.
// Of messages, only what is new counts: a user message at the end is the
// new message (its text, and media sent inline as data, base64; media of
// source type "file", a Gemini file's URI, is refused with 400, code
// bad_part, unless agentserver.Config.AllowFileURI allows the user that
// URI, since the model would read it with the server's credentials;
// source type "url" is refused: the server fetches no URL), and context
// entries are added to
// it as text; tool messages answer the browser tools the run waits for.
// Every other message is the client's copy of the history, which the
// server never trusts; state and forwardedProps are not read. Tools are
// the frontend tools: they join the agent's tools for a run that starts.
// resume answers the interrupts of the previous AG-UI run: status
// "resolved" with payload {approved, reason?} decides a call that needs
// approval (editedArgs is refused), "cancelled" denies it (and is
// ignored for an interrupt that is no longer pending, as the client
// sends it for one that expired). A request on a busy thread is refused
// with 409, unless it resumes the run that waits. A request holds at
// most the server's MaxMessages messages, and as many resume entries
// (400 otherwise); its body arrives within the server's BodyTimeout (408
// otherwise; a server that mounts the handler sets the http.Server's
// ReadHeaderTimeout and IdleTimeout: see agentserver's Hostile requests).
// A new run is refused, before its stream, with the
// server's limits and quotas (agentserver's package doc): 503 or 429
// too_many_runs, 429 thread_quota for a new thread of a user who has as
// many as the server keeps, 429 storage_quota for a user whose threads
// hold as much as it keeps, each a JSON error {"error":{"code","message"}}.
//
// POST {path}/connect with the same body reconnects: it streams the
// thread's run in progress from its start, as one AG-UI run, or an empty
// run when nothing runs. HttpAgent has no connect of its own; a subclass
// adds it (see the package's tests).
//
// GET {path}/messages?threadId=… answers the thread's stored messages as
// a MESSAGES_SNAPSHOT event (see [Messages]), so that a page that reloads
// shows the conversation: hand its messages to HttpAgent's
// initialMessages (or setMessages). A thread nothing was stored for (a
// new one, or another user's) has none. Of a run in progress it holds
// the question (the user message that started it, with the id it keeps
// once stored), and nothing else until the run ends: POST {path}/connect
// then shows the run, and the calls it waits for. A page that reloads,
// knowing nothing, thus loads the messages, connects, and decides the
// pending calls with resume as before the reload:
//
//	const { messages } = await (await fetch(`/agui/messages?threadId=${threadId}`)).json()
//	const page = new ConnectingAgent({ url: '/agui/connect', threadId, initialMessages: messages })
//	await page.connectAgent({ runId })     // page.pendingInterrupts: the calls that wait
//	const agent = new HttpAgent({ url: '/agui', threadId, initialMessages: page.messages })
//	await agent.runAgent({ runId, resume: [{ interruptId, status: 'resolved', payload: { approved: true } }] })
//
// (ConnectingAgent is HttpAgent with connect(input) { return this.run(input) }.)
//
//	const { messages } = await (await fetch(`/agui/messages?threadId=${threadId}`)).json()
//	const agent = new HttpAgent({ url: '/agui', threadId, initialMessages: messages })
//
// POST {path}/cancel with a JSON body naming the thread ({"threadId": …};
// a whole RunAgentInput will do) cancels the thread's run in progress, a
// run that waits for approvals included (its calls are denied), and
// answers once the run is over and saved: 200 with the run as JSON
// (agentserver.RunInfo: state "cancelled", or the state it reached if it
// ended first), 404 when nothing runs (or the thread is another user's).
// The next message is taken at once. The stream still open ends as the
// run does: each stopped call's TOOL_CALL_RESULT (an error), then
// RUN_FINISHED with outcome cancelled. HttpAgent's abortRun only drops
// the connection, and a dropped connection does not stop the run: it
// goes on and is saved, so that a reconnect finds it and a flaky network
// loses nothing. A stop button therefore calls the route:
//
//	await fetch('/agui/cancel', { method: 'POST', headers: { 'content-type': 'application/json' },
//		body: JSON.stringify({ threadId }) })
//
// # The stream
//
// RUN_STARTED; per model turn STEP_STARTED, TEXT_MESSAGE_START/CONTENT/END
// (one assistant message per turn, also the parent of the turn's tool
// calls), REASONING_START and REASONING_MESSAGE_* (thought summaries; no
// encrypted values: thought signatures stay on the server), for each call
// TOOL_CALL_START/ARGS/END and its TOOL_CALL_RESULT (content: the result's
// JSON, or the error's message, with metadata {isError, denied}), and
// between them the call's progress as ACTIVITY_SNAPSHOT events of an
// activity message of its own (messageId: the call's id and "-progress",
// activityType "tool-progress", content {toolCallId, done, total,
// message}, each replacing the last; the server ignores activity
// messages a client sends back), STEP_FINISHED; retries as CUSTOM events
// named "retry"; and at the end
// RUN_FINISHED (outcome success, with the usage, and result: a typed
// answer), RUN_FINISHED with outcome cancelled, or RUN_ERROR with a safe
// message and code. Text and reasoning are closed before a tool call
// starts (older clients throw otherwise) and everything is closed before
// the run's end, as the client's verifier requires. Calls that need
// approval end the AG-UI run with RUN_FINISHED, outcome interrupt: one
// interrupt per call (id: the call's id, reason "tool_call", expiresAt:
// its deadline); browser tools' calls end it with outcome success and
// their pendingToolCallIds.
//
// On a server that keeps files (agentserver.Config.Artifacts), the
// TOOL_CALL_RESULT of a call that made files has parts for content, as
// AG-UI 1.0 carries a tool's media: a text part with the result's JSON,
// then an image, audio, video or document part per file, whose source is
// {type "url", value: its download link on the server, mimeType}, its
// name in metadata.filename. A "url" source is what 1.0 has for bytes a
// consumer fetches; a "file" source is a model provider's handle, which
// a consumer must not fetch; "data" would put the bytes in every event
// and snapshot. A user's media part with a "data" source is kept as a
// file of the thread (named by metadata.filename), and the messages route
// gives each file as a "url" source.
package agui
