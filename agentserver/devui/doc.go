// Package devui is a development UI for an agent served by package
// agentserver: a page in the browser to chat with the agent and see every
// call it makes, without adding a print statement.
//
//	rec := devui.NewRecorder(nil)
//	srv, _ := agentserver.New(agentserver.Config{Agent: a, Observer: rec})
//	defer srv.Close(context.Background())
//	http.Handle("/", devui.Handler(srv, nil)) // finds rec as the server's Observer
//
// examples/chat serves it for its agent: go run ./examples/chat -web localhost:8080.
//
// # The page
//
// One page of the package's own HTML, CSS and JavaScript, embedded in the
// binary: no build step, nothing fetched from anywhere else (its Content
// Security Policy allows its own origin only). Its views:
//
//   - Chat: the answer streams in as it is generated; thoughts are folded;
//     each tool call is a card with its name, arguments, a progress bar
//     while its tool reports progress (the percentage and the tool's
//     message), its result or error, duration, and whether it ran in
//     parallel with others; calls that need
//     approval have Approve and Deny buttons, calls of browser tools
//     (Options.BrowserTools) a form for their result, both gone once the
//     call is decided; retries, a typed answer (as JSON) and the run's end
//     are shown as they come. A page reloaded while a run goes on finds it
//     and reads it from its start. A pause is resolved whole: a call
//     approved while another of its turn still waits says "approved,
//     waiting for the other decision", and runs once every call is
//     decided; its duration counts from then, and its wait is shown as
//     two: for its own decision, then for the others'.
//   - Denied calls: shown denied, with the reason, live and after a
//     reload or a restart: the stored history marks a denied call's
//     answer {"error": reason, "denied": true} (geminiadapter.Response),
//     which tells it from a tool's failure.
//   - Runs: each recorded run, with where it stands (running, waiting for
//     approval or for a browser tool, done, failed, cancelled), as a
//     timeline: model calls and tool calls as
//     bars on one time axis, each under the span it belongs to (the run,
//     the call that runs an agent as a tool), so that parallel calls are
//     side by side and failed attempts and their waits are visible (a
//     call's wait for its decision, then, when it was decided first, for
//     the other calls' decisions: api/runs/{id} gives a tool span's
//     wait.from, wait.to and wait.resumed); the
//     tokens of the run and of each model call (input, output, thoughts,
//     cached) with the input's billed split (at the full price, and read
//     from a cache at the cached price: agent.Usage's UncachedTokens and
//     CachedTokens; api/runs and api/runs/{id} give them as usage.fullPrice
//     and usage.cached); and, on
//     a click, the exact request the call sent (model, contents, config with
//     the tools' declarations) and the response it got, as JSON. The list
//     is filtered by text (a part of a run's id, conversation id, message
//     or a called tool's name, in any case), by state and by a tool the
//     run called; the filter is in the page's address
//     (#runs/<run>?q=…&state=…&tool=…), so a reload or a shared link
//     keeps it.
//   - Memories: with a memory service (package memory) whose
//     Config.Observer is the Recorder, an answer shows the memories its
//     run was given ("2 memories used", each with its author, date and
//     thread), and the run's timeline has a span for each memory search
//     (Preload's, before the first model call, and the search tool's),
//     whose detail gives the query, how it ranked (by words, or hybrid,
//     or by words because the query could not be embedded) and each
//     memory found with its ranks, and one for the memories the run's end
//     stored (agentserver's Config.Remember).
//   - Files: on a server that keeps files (agentserver.Config.Artifacts),
//     the files a call made show in its card as it streams (and when the
//     conversation is loaded again), each with its name, type, version
//     and a download link, and a preview: an image as it is, the start of
//     a text file (CSV, JSON, Markdown); a PDF, HTML and any other file
//     get the link only. The composer's Attach picks files to send with
//     the next message (AI SDK file parts), kept as the thread's files.
//     The page serves the server's artifacts routes under api/artifacts/.
//   - Conversations: the user's threads, each one's stored history with
//     every content and part, and its files, any of them continued in the
//     chat.
//   - Agent: its name (agent.Config.Name; the page says so when it has
//     none), model, request config, tools with their declarations as
//     Gemini receives them, and limits. Each tool has a Run form: its
//     arguments as JSON, at first each property its schema requires with
//     an empty value; the server runs it (api/tools/{name}/run, below)
//     and the page shows its result, or the error the model would read,
//     and how long it took.
//   - Evals: the eval cases saved from conversations (the
//     Conversations page's Save as eval case), run on a click, each
//     case's metrics with their score, threshold, status and
//     explanation, turn by turn (what was expected against what the
//     agent did); the set downloads as an .evalset.json file (see
//     api/evals/run, below).
//
// JSON (requests, responses, arguments, results, declarations, stored
// parts) is shown as a tree: an object's or array's opening bracket is a
// button that folds and unfolds it (a click, or Enter or Space); one whose
// JSON takes more than 400 characters on one line is folded at first, the
// outermost excepted. Folded or not, the text of the tree is the whole
// JSON, indented: copying it copies all of it.
//
// The page fits a window 420 pixels wide: the header keeps one row, and a
// list stacks above its detail.
//
// Thought signatures never reach the page: where one is, the page shows
// that it is there and its size. Inline data (images, files) is shown by its
// type and size too.
//
// # Talking to the server
//
// The chat is the AI SDK's UI message stream (package aisdk), mounted by
// Handler at api/chat, with its resume route; the page's own client reads
// it. The rest is a small JSON API, every route authenticated by the
// server's Config.Authenticate and confined to the user it names:
//
//	GET  api/info                     the agent and the server's limits
//	GET  api/threads[?limit=N&cursor=C]  a page of the user's threads, {"threads":[…],"next":C}
//	GET  api/threads/{id}[?from=N]    a thread's contents (500 at most per answer; denied calls marked), its run in progress;
//	                                  404 for a thread that does not exist, an empty one with ?missing=empty
//	GET  api/runs[?thread=id]         the user's recorded runs, the latest first, each with the tools it called
//	GET  api/runs/{id}                a run's timeline
//	GET  api/runs/{id}/calls/{span}   a model call's request and response
//	POST api/runs/{id}/cancel         stop a run (application/json only)
//	POST api/tools/{name}/run         run one of the agent's tools by hand: {"args":{…}} (application/json only),
//	                                  {"tool","output","isError","invalid","durationMs"}
//	GET  api/threads/{id}/evalcase    the thread as an eval set of one case (package eval's, ADK's format)
//	POST api/evals/run                run an eval set (the body, ADK's format; application/json only):
//	                                  {"status","passed","failed","notEvaluated","metrics","cases":[{"id","status","error","metrics":[…]}]}
//
// The threads come a page at a time (100 unless limit says otherwise,
// 1000 at most), the most recently updated first, from the store's
// listing by owner (agentserver's Server.Threads); next, when there is
// one, is the cursor of the next page.
//
// A tool run by hand (the Agent page's Run form) runs as the agent runs
// a model's call (agent.Steps.RunCall): its arguments checked against the
// tool's schema, under the agent's ToolTimeout, through its Intercept,
// its output capped, on the request's context naming the user as a
// served run's does (agentserver.RunUser is the user who asked; it names
// no run: agentserver.RunID is empty, and no conversation). Arguments that fail the schema,
// and a tool's failure, are answered 200 with isError set and output the
// message the model would read (invalid set for the schema's). A tool
// that needs approval (the agent's NeedsApproval) is refused, 403
// needs_approval, unless Options.RunToolsNeedingApproval is set: whoever
// runs it then approves it. Browser tools are the page's: not run here.
// The body is bounded by the server's Config.MaxBodyBytes (413). Tools
// run by hand are bounded as runs are, counted apart from them: a user
// runs the server's Config.MaxRunsPerUser at once (429 too_many_runs
// beyond), all users Config.MaxRuns (503).
//
// An eval case made of a thread (the Conversations page's "Save as eval
// case") has a turn per user message, each expecting the tool calls the
// agent made (with their arguments) and the last text it answered. The
// page keeps the cases it saved in the browser (localStorage), shows them
// on the Evals page, and runs them there, or downloads them as an
// .evalset.json file that package eval's Test runs under go test (and ADK
// loads). A run from the page scores each case once with package eval's
// default criteria (eval.DefaultCriteria: the tool trajectory, exactly,
// and the answer's ROUGE-1 match, at least 0.8) and shows each metric's
// score, threshold and explanation. It runs the agent itself, as the
// user (agentserver.RunUser), not as a served run, and it is not
// recorded: calls that need approval are decided as the conversation
// recorded them (eval.ReplayDecisions: a call approved then runs again, a
// denied one is denied with its reason, a call the conversation did not
// make is denied), and the tool trajectory tells a call that ran from one
// that did not. A run spends the model's tokens: it takes at most 20 cases
// and 100 turns, 2 minutes per case, one case at a time, one run at a
// time per user (429 eval_busy while another goes on); a scenario case
// (which needs a user simulator) is refused.
//
// Another user's thread or run is answered exactly as one that does not
// exist: 404. Errors are the server's: {"error":{"code","message"}}. A
// request's body (the API reads a tool run's; net/http drains the others
// before it answers) must arrive within the server's Config.BodyTimeout, as the
// chat's must: a client that stalls is cut off. A server that mounts the
// UI sets the http.Server's ReadHeaderTimeout and IdleTimeout (see
// agentserver's Hostile requests).
//
// No page of another site drives the UI for the person who opened it: a
// POST a browser says comes from another origin (Sec-Fetch-Site, or an
// Origin that is not the UI's) is refused with 403 (net/http's
// CrossOriginProtection), and the server takes only bodies sent as
// application/json, which such a page cannot send without asking. A
// server without Config.Authenticate (the anonymous user, for
// localhost) refuses requests that name another host than localhost,
// which is what a page whose name was rebound to 127.0.0.1 sends (see
// agentserver.Server.User). Serve the UI from its own origin: a page of
// another origin that should reach it must be same-origin to it (a
// proxy), not allowed by CORS.
//
// # Voice mode
//
// With Options.Live (package agentserver/live's Handler, mounted at
// api/live), the chat has a Voice button: it opens a live session on the
// conversation shown, and turns the microphone on (the browser asks for
// it); pressed again it turns it off, and the model answers what it
// heard. The microphone is captured at 16 kHz (AudioContext, echo
// cancellation and noise suppression off) and sent as raw 16-bit PCM;
// the model's speech is played with Web Audio at 24 kHz, cut short when
// the user speaks over it. The user's words and the model's come in as
// transcripts, each tool call as a card (Approve and Deny for those that
// need approval, decided in the session), as they happen; the transcript
// is saved to the conversation when each turn completes, so a text
// message after it continues the same conversation. The session stays
// open for the next press of the button, until the page leaves or a
// limit ends it (the page says why).
//
//	lh, _ := live.New(srv, live.Config{Client: client, Agent: voiceAgent})
//	http.Handle("/", devui.Handler(srv, &devui.Options{Live: lh}))
//
// # Recording
//
// The timelines come from a [Recorder], an agent.Observer the server is
// given as Config.Observer (and a memory.Observer, the memory service's
// Config.Observer, for the memory spans): it keeps the last RecorderOptions.KeepRuns runs
// of each user (20), of at most KeepUsers users (100), in memory, each with
// at most MaxSpans steps (2000). Without one, the page works but has no
// timelines, nor durations on its tool cards. A run's timeline holds what
// its stream has shown: a client that saw a call wait for approval, or the
// run end, finds it in the timeline it asks for next.
//
// The UI is for development: it shows users their own runs in full, the
// requests their runs sent included. Mount it where the developers are,
// behind the same authentication as the rest of the server.
package devui
