// Package a2aagent speaks the Agent2Agent protocol both ways: [Handler]
// serves an [agentserver.Server] to other agents, in A2A 1.0 (JSON-RPC
// and HTTP+JSON) and A2A 0.3 (JSON-RPC), and [RemoteTool] makes a remote
// A2A agent a tool, speaking 1.0 to an agent whose card lists 1.0 and 0.3
// to one whose card does not. Its wire types and clients are
// github.com/a2aproject/a2a-go's (v0.3.15) and, for 1.0,
// github.com/a2aproject/a2a-go/v2's (v2.4.0).
//
//	srv, _ := agentserver.New(agentserver.Config{Agent: a, Authenticate: auth})
//	h := a2aagent.Handler(srv, nil)
//	http.Handle(a2aagent.CardPath, h)        // GET: the agent card
//	http.Handle(a2aagent.DefaultPath, h)     // POST: 0.3's JSON-RPC
//	http.Handle(a2aagent.DefaultPath+"/", h) // 1.0's JSON-RPC and HTTP+JSON
//
// # Versions
//
// One agent is served in both versions, each at its own URL, under the
// path of Options.URL (DefaultPath, "/a2a", by default):
//
//	/a2a          A2A 0.3, JSON-RPC: message/send, message/stream, tasks/get,
//	              tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/
//	              {set,get,list,delete}
//	/a2a/v1       A2A 1.0, JSON-RPC: SendMessage, SendStreamingMessage, GetTask,
//	              ListTasks, CancelTask, SubscribeToTask,
//	              {Create,Get,Delete}TaskPushNotificationConfig,
//	              ListTaskPushNotificationConfigs
//	/a2a/v1/rest  A2A 1.0, HTTP+JSON: POST /message:send, /message:stream,
//	              GET /tasks, /tasks/{id}, POST /tasks/{id}:cancel, /tasks/{id}:subscribe,
//	              POST|GET /tasks/{id}/pushNotificationConfigs, GET|DELETE
//	              /tasks/{id}/pushNotificationConfigs/{configId}
//
// Clients choose from the card: a 1.0 client takes an interface of
// supportedInterfaces whose protocolVersion is 1.0, a 0.3 client reads the
// card's url (the 0.3 endpoint). Both see the same tasks: the 1.0
// bindings are a2a-go/v2's transports over the same code, which converts
// requests to 0.3's types and tasks and events to 1.0's (no kind,
// TASK_STATE_ enums, no final: a stream ends when it closes). What this
// doc says of 0.3's methods holds of their 1.0 names. The A2A-Version
// header is not read: the URL says the version.
//
// # The card
//
// GET CardPath serves the card, to anyone (it says how to speak to the
// agent, not what it did), one that clients of both versions read, as
// a2a-go/v2's a2av0 writes it: the agent's name (Config.Name), a
// description and skills derived from the agent and its tools (one skill
// for the agent, one per tool), version, capabilities.streaming;
// supportedInterfaces, in this order, 1.0 JSON-RPC, 1.0 HTTP+JSON and
// 0.3 JSON-RPC; and, for 0.3, protocolVersion 0.3, preferredTransport
// JSONRPC and the url of the 0.3 endpoint. Each URL is completed from the
// request when Options.URL is a path. Options override each of them, and
// Options.Card edits the card (a provider, security schemes that say how
// Authenticate wants to be spoken to) in 0.3's form, which the 1.0 fields
// are derived from.
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
// A result's response is what the model read: {"result": …}, {"error":
// message} for a failure, and {"error": reason, "denied": true} for a
// call refused rather than run (denied, or not decided in time), as the
// thread's stored history keeps it (geminiadapter.Denied).
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
// tools, and answers the task once it is canceled. A task's history
// holds the user's message that started it (agentserver.RunInfo.Message:
// its text and files; its id the task's and "-question", since the id
// the client gave it is not kept), as A2A clients expect of a task in
// progress too; the rest of the conversation is the thread's, on the
// server.
//
// ListTasks (1.0 only) lists the caller's tasks that the server keeps (in
// progress, or over for less than agentserver.Config.KeepFinished: those
// GetTask finds; agentserver.Server.Runs), the latest started first,
// never another user's: all of them, or a context's (contextId), or
// those of a state (status) or whose status changed after a time
// (statusTimestampAfter). Pages hold 50 tasks unless pageSize says (1 to
// 100); nextPageToken goes on, totalSize counts the matches. Tasks come
// without their artifacts unless includeArtifacts is set. Each listing
// reads the user's runs, and the log of each task it lists; a server
// whose agentserver.Runner is not an agentserver.RunLister answers
// unsupported operation.
//
// # Files
//
// On a server that keeps files (agentserver.Config.Artifacts), each file
// a call made is an artifact of the task of its own (name: the file's),
// one file part: its bytes when it is at most MaxFileBytes (1 MiB), else
// the URI it downloads from (the server's artifacts route, absolute when
// Options.URL is), in 0.3 and 1.0 alike. A file part with bytes in a
// user's message is kept as a file of the thread, named after it.
//
// # Push notifications
//
// A client that does not hold a stream open sets a webhook of its task
// (capabilities.pushNotifications on the card): in the message that
// starts it or goes on with it (configuration.pushNotificationConfig;
// 1.0: configuration.taskPushNotificationConfig), or with the push
// methods above, which set (replacing the config of the same id), read,
// list and delete a task's configs. A 0.3 config without an id takes
// the task's, as 0.3's SDKs do; a 1.0 one is given one. Each config is
// notified with a POST of the task, as its version says it (0.3: the
// Task; 1.0: a StreamResponse holding the Task, {"task":…}), folded as
// tasks/get folds it, artifacts included: the task as it stood when the
// config was set (from its start, for a config its message set), then
// each time its state changes (working, input-required, working again
// once decided, and its end), in order, one notification at a time; a
// config's notifications end with the task's. The request carries the
// config's token, as A2A-Notification-Token (1.0's SDKs) and
// X-A2A-Notification-Token (0.3's), and its credentials as
// "Authorization: <scheme> <credentials>", for the schemes Bearer and
// Basic (others are refused). A 2xx answers it; a 5xx or 429 answer, or
// none within PushOptions.Timeout, is tried again (PushOptions.Retries,
// from RetryDelay, doubling); another answer, a redirect included, is
// not. A notification not delivered is logged (Warn).
//
// Webhooks are hostile input: a config is refused (invalid params,
// saying why) when its url is not an absolute http or https URL, holds
// credentials, or is longer than 2048 bytes (a token 1024, credentials
// 4096, an id 256, and neither token nor credentials may break a line),
// and, unless PushOptions.AllowPrivateNetworks is set, when its host is,
// or resolves to, a loopback, private, link-local, shared, unspecified
// or multicast address. The address is checked again as each
// notification is dialed (no proxy), so that a name resolving elsewhere
// since (DNS rebinding) is not reached. A task holds
// PushOptions.MaxPerTask configs, a user's tasks together MaxPerUser
// (10 and 100); a config whose task ended is let go once the server's
// KeepFinished has passed. Configs are the user's: another user's task is
// not found (-32001) to every push method. They are kept in the
// handler's memory: a config is notified by the process it was set on,
// until the server closes (agentserver.Server.Done), which drops the
// notifications still due; GetTask says where the task stands. They are
// the one thing the handler keeps about tasks: a task is a run, found
// through the server's agentserver.Runner, so on a fleet of instances
// sharing one (temporalagent's Runner) every other method answers on any
// instance, while a config is seen by the push methods, and notified, by
// the instance it was set on only.
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
// task that cannot be canceled, -32003 for push notifications when
// PushOptions.Disabled is set, -32004 for a message the task or its context cannot take,
// -32007 for the extended card (none). Each error's message says what is
// wrong, and so does its data.error (where a2a-go's clients read it);
// internal errors say nothing and are logged. 1.0 says the same errors
// with the same codes and messages, as a2a-go/v2 writes them: JSON-RPC's
// data is an array of details (google.rpc.ErrorInfo's reason, as
// TASK_NOT_FOUND; data.code below is a detail), HTTP+JSON's errors are a
// google.rpc.Status with the code's HTTP status (404 for a task not
// found, 400 for bad params; an error before a stream's first event too,
// rather than an event of the stream, so that @a2a-js/sdk reads it). A
// refusal of 1.0 JSON-RPC before it is read (credentials, the body's
// size, type or time below), and one by the server's limits or quotas
// (429, 503) in either binding, has the HTTP status 0.3's has, data.code
// a detail (HTTP+JSON: RESOURCE_EXHAUSTED or UNAVAILABLE). A task the server's limits
// or quotas refuse (agentserver's package doc: a context is a thread) is
// a server error (-32000) with the HTTP status of the refusal (503, or
// 429 for one user's runs or quotas) and data.code saying which:
// too_many_runs, thread_quota (a new context of a user who has as many
// threads as the server keeps), storage_quota (a user whose threads hold
// as much as it keeps). A body over the server's
// MaxBodyBytes is refused with 413, one not sent as application/json
// (or, in 1.0, application/a2a+json) with 415 (a page of another site
// could post it without asking; a 1.0 POST of no body, such as cancel
// over HTTP+JSON, has none to check), one that
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
