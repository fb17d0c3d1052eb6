// Package a2aagent speaks the Agent2Agent protocol (A2A 0.3.0, JSON-RPC
// over HTTP) both ways: [Handler] serves an [agentserver.Server] to other
// agents, and [RemoteTool] makes a remote A2A agent a tool. Its wire types
// and its client are github.com/a2aproject/a2a-go's (v0.3.3).
//
//	srv, _ := agentserver.New(agentserver.Config{Agent: a, Authenticate: auth})
//	h := a2aagent.Handler(srv, nil)
//	http.Handle(a2aagent.CardPath, h)    // GET: the agent card
//	http.Handle(a2aagent.DefaultPath, h) // POST: JSON-RPC, at the card's url
//
// # The card
//
// GET CardPath serves the card, to anyone (it says how to speak to the
// agent, not what it did): the agent's name (Config.Name), a
// description and skills derived from the agent and its tools (one skill
// for the agent, one per tool), version, protocolVersion 0.3.0,
// preferredTransport JSONRPC, capabilities.streaming, and the url of the
// JSON-RPC endpoint: Options.URL, completed from the request when it is a
// path. Options override each of them, and Options.Card edits the result
// (a provider, security schemes that say how Authenticate wants to be
// spoken to).
//
// # Tasks
//
// A task is a run of the server's (its id is the run's) and its contextId
// is the run's thread: a message without a contextId starts a thread, one
// with a contextId goes on with the thread of that name (the user's own:
// another user's thread of the same name is another thread). A context
// takes one task at a time. message/send answers the task once the run
// ends or waits for input (at once, with configuration.blocking false);
// message/stream answers with server-sent events, each a JSON-RPC response:
// the Task (submitted), its status (working), then, per model turn, one
// artifact (id: the task's, "-t", the turn) that grows as the run goes, its
// text as it streams (append), its thoughts (text parts with metadata
// adk_thought), and each tool call and result as the data parts ADK uses,
// so that ADK clients render them:
//
//	{"kind":"data","data":{"id":…,"name":"get_weather","args":{"city":"Paris"}},
//	 "metadata":{"adk_type":"function_call","adk_is_long_running":false}}
//	{"kind":"data","data":{"id":…,"name":"get_weather","response":{"result":…}},
//	 "metadata":{"adk_type":"function_response"}}
//
// A running call's progress (toolset.ReportProgress, paced by the agent's
// Config.ProgressInterval) is a status update, working and not final,
// whose message says it in a sentence ("count_primes: 400 of 1000,
// checked 400") and then holds it as a data part marked
// toolnexus_tool_progress (ADK has no such part; its clients show the
// sentence):
//
//	{"kind":"data","data":{"id":…,"name":"count_primes","done":400,"total":1000,"message":"checked 400"},
//	 "metadata":{"toolnexus_tool_progress":true}}
//
// The last artifact of a completed task is the answer (adk-python reads
// the last one). A typed agent's answer (agent.Typed) is one more
// artifact, "-output", of one data part: the value when it is a JSON
// object, else {"value": v} with metadata data_part_compat, as
// @a2a-js/sdk wraps such values. The stream ends with the final status:
// completed, failed or canceled (with a message saying why, and
// adk_error_code), its metadata holding the run's usage as Gemini counts
// it (adk_usage_metadata). tasks/get folds the same events into one task,
// streamed text joined; it answers for as long as the server keeps runs
// that are over (agentserver.Config.KeepFinished), whole: a task's run
// keeps its log for that while (agentserver.Request.KeepLog, each turn's
// text joined once the run is over), though its stream has read its end.
// (The run of another protocol's request, whose log is cut once read, is
// the task of its end: its answer's text and typed answer.) tasks/resubscribe
// streams the task as it stands, then the rest of the run: a client that
// dropped its stream picks it up. tasks/cancel stops the run and its
// tools, and answers the task once it is canceled. Tasks carry no
// history: the conversation is the thread's, on the server.
//
// # Input required
//
// A call that needs approval (the agent's Config.NeedsApproval) ends the
// stream with the status input-required, final. Its message says what
// waits, in a sentence, then holds, for each call, ADK's request to
// confirm it: a long-running function call named adk_request_confirmation
// whose id is the call's and whose args hold the originalFunctionCall. The
// follow-up message, on the same task (taskId), decides: a
// function_response data part per call, of its id, whose response is
// {"confirmed": true} or {"confirmed": false, "reason": "…"} ({"approved":
// …} and ADK web's JSON string are read too; the message's text is the
// reason of a refusal that gives none):
//
//	{"kind":"data","data":{"id":…,"name":"adk_request_confirmation","response":{"confirmed":true}},
//	 "metadata":{"adk_type":"function_response"}}
//
// The task then goes on, streamed from the decisions on; calls still
// undecided end it with input-required again. A decision for a call the
// task does not hold pending, or that was decided already, is refused
// (invalid params), and changes nothing; so is a follow-up that decides
// nothing. A call nobody decides within agentserver.Config.ApprovalTimeout
// is refused, and the model told why. A message to a task that is over is
// refused (unsupported operation): the next message of the context starts
// the next task.
//
// # Errors and limits
//
// Every request is authenticated by the server's Config.Authenticate
// (refused: HTTP 401), and every task belongs to one user: another user's
// is not found (-32001), whatever is asked of it. Bad JSON-RPC gets the
// spec's codes, with the request's id when it could be read: -32700 for a
// body that is not JSON, -32600 for a request that is not one (a batch, a
// wrong jsonrpc, an id that is an object, not UTF-8, or longer than 256
// bytes as JSON: every event of a stream repeats it), -32601 for an unknown method,
// -32602 for bad params (a message with no parts or too many, an unknown
// part kind, a bad decision, a file part with a uri that
// agentserver.Config.AllowFileURI does not allow the user: every uri when
// it is nil, since the model would read the file with the server's
// credentials; send the file's bytes), -32001 for a task not found, -32002 for a
// task that cannot be canceled, -32003 for push notifications (not
// supported), -32004 for a message the task or its context cannot take,
// -32007 for the extended card (none). Each error's message says what is
// wrong, and so does its data.error (where a2a-go's client reads it);
// internal errors say nothing and are logged. A task the server's limits
// or quotas refuse (agentserver's package doc: a context is a thread) is
// a server error (-32000) with the HTTP status of the refusal (503, or
// 429 for one user's runs or quotas) and data.code saying which:
// too_many_runs, thread_quota (a new context of a user who has as many
// threads as the server keeps), storage_quota (a user whose threads hold
// as much as it keeps). A body over the server's
// MaxBodyBytes is refused with 413, one not sent as application/json with
// 415 (a page of another site could post it without asking), one that
// does not arrive within the server's BodyTimeout with 408 and its
// connection closed (a server that mounts the handler sets the
// http.Server's ReadHeaderTimeout and IdleTimeout: see agentserver's
// Hostile requests), and a streaming method's error before
// its stream is an SSE event of the error, as A2A clients read it.
// Streams have the server's keep-alives and write deadline.
//
// # A remote agent as a tool
//
// RemoteTool reads an agent card and returns a toolset.Tool the model calls
// with a request, and whose result is the remote agent's answer; see its
// documentation for the conversation it keeps per conversation of ours,
// its questions (input-required), and how it fails. The remote agent's
// progress parts are the calling tool's progress (an EventToolProgress of
// the call, "count_primes: checked 400").
package a2aagent
