// Package aisdk serves an [agentserver.Server] over the Vercel AI SDK's
// UI message stream protocol (AI SDK v7): the stream useChat reads, from
// DefaultChatTransport, with its resume route.
//
//	srv, _ := agentserver.New(agentserver.Config{Agent: a})
//	h := aisdk.Handler(srv)
//	http.Handle("/api/chat", h)
//	http.Handle("/api/chat/", h) // GET /api/chat/{id}/stream: resume
//
// On the client:
//
//	const { messages, sendMessage, addToolApprovalResponse, addToolOutput } = useChat({
//		id: threadId,
//		resume: true,
//		sendAutomaticallyWhen: ({ messages }) =>
//			lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) ||
//			lastAssistantMessageIsCompleteWithToolCalls({ messages }),
//	})
//
// # Requests
//
// POST (on any path the handler is mounted at) takes the transport's body,
// {id, messages, trigger, messageId}: id names the thread; of messages,
// only the last counts: a user message is the new message (its text and
// file parts: a file's data sent as a data: URL, base64; a file named by
// any other URL, such as gs://…, is refused with 400, code bad_part,
// unless agentserver.Config.AllowFileURI allows the user that URI: the
// model would read it with the server's credentials; the server fetches
// no URL), an assistant message carries the
// decisions: tool parts in state approval-responded approve or deny the
// calls the run waits for, and tool parts in state output-available or
// output-error give the results of browser tools it waits for. Every
// other message is the client's copy of the history, which the server
// never trusts (the thread's history is on the server). trigger
// "regenerate-message" is refused (400, code unsupported_trigger): a
// thread only grows, so an answer cannot be replaced; send the question
// again. An edited message is taken as a new one.
//
// Browser tools (tools the client runs, in onToolCall) are declared in
// the body, beside the transport's fields, through its body option:
//
//	new DefaultChatTransport({ api: '/api/chat', body: { tools: [
//		{ name: 'get_location', description: 'Where the user is', inputSchema: { type: 'object', properties: {} } },
//	] } })
//
// GET {id}/stream under the handler's path resumes: it streams the
// thread's run in progress from its start (the run's whole assistant
// message, which the client rebuilds in place), or answers 204 when
// nothing runs. A second POST on a busy thread is refused with 409. A
// body must arrive within the server's BodyTimeout (408 otherwise; a
// server that mounts the handler sets the http.Server's ReadHeaderTimeout
// and IdleTimeout: see agentserver's Hostile requests). A
// new run is refused, before its stream, with the server's limits and
// quotas (agentserver's package doc): 503 or 429 too_many_runs, 429
// thread_quota for a new chat of a user who has as many as the server
// keeps, 429 storage_quota for a user whose chats hold as much as it
// keeps, each a JSON error {"error":{"code","message"}}.
//
// # Loading a chat
//
// GET {id}/messages under the handler's path answers the chat's stored
// messages as UIMessage[] (see [Messages]), what useChat's messages option
// takes, so that a page that reloads shows the conversation; [] for a
// chat nothing was stored for (a new one, or another user's). Of a run
// in progress it holds the question (the user message that started it,
// with the id it keeps once stored), and nothing else until the run
// ends: load the messages, then resume the run (resume: true) to show
// its answer after the question.
//
//	const initial = await (await fetch(`/api/chat/${id}/messages`)).json() // before the chat renders
//	const { messages } = useChat({ id, messages: initial, resume: true })
//
// # Stopping a run
//
// DELETE {id}/stream under the handler's path (the stream's own route:
// deleting it ends it) cancels the thread's run in progress, a run that
// waits for approvals included, and answers once the run is over and
// saved: 200 with the run as JSON (agentserver.RunInfo: state
// "cancelled", or the state it reached if it ended first), 404 when
// nothing runs (or the chat is another user's). The next message is
// taken at once. The stream still open ends as the run does: each
// stopped call's tool-output-error, abort, finish; the stored history
// answers each stopped call with an error.
//
// useChat's stop() only drops the connection, and a dropped connection
// does not stop the run: it goes on and is saved, so that a reload
// resumes it (resume: true) and a flaky network loses nothing. A stop
// button therefore calls the route, and lets the stream end by itself:
//
//	const onStop = () => fetch(`/api/chat/${id}/stream`, { method: 'DELETE' })
//
// (calling stop() too ends the stream on the client at once, but leaves
// a stopped call's part input-available there until the page reloads
// the chat).
//
// # The stream
//
// A run is one assistant message (its messageId is the run's): start,
// then per model turn start-step, text-start/text-delta/text-end,
// reasoning-start/reasoning-delta/reasoning-end (thought summaries), for
// each call tool-input-available, and its tool-output-available,
// tool-output-error or tool-output-denied; finish-step; at the end
// data-output (a typed answer), error (a failure, its safe message),
// and finish with the usage in messageMetadata. A call that waits ends
// the response with tool-approval-request (approvals) and finish
// (finishReason tool-calls); the request that decides continues the same
// message, from tool-approval-response. Retries are data-retry parts. A
// running call's progress is a transient data-tool-progress part (id: the
// call's toolCallId; data {toolCallId, done, total, message}), which the
// client hands to useChat's onData and keeps in no message: the last one
// before a call's tool-output-available is its last report.
// On a server that keeps files (agentserver.Config.Artifacts), each file
// a call made follows its tool-output-available as a file part, {type
// "file", url, mediaType, providerMetadata {toolnexus {name,
// toolCallId}}}: url downloads it from the server's artifacts route
// (relative to the server); a user's file part (a data: URL, with its
// filename) is kept as a file of the thread, and the messages route links
// each file. Every frame is "data: <json>\n\n", the last "data: [DONE]".
package aisdk
