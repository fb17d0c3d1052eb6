package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
)

// CardPath is where the agent card is served, as A2A 0.3 says.
const CardPath = "/.well-known/agent-card.json"

// DefaultPath is where JSON-RPC is served when Options.URL names no path.
const DefaultPath = "/a2a"

// The versions of A2A the handler speaks, each at its own URL: see the
// package doc.
const (
	ProtocolVersion       = "1.0"
	LegacyProtocolVersion = "0.3"
)

// Options configure a Handler. The zero value serves JSON-RPC at
// DefaultPath with a card derived from the agent.
type Options struct {
	// URL is where clients send JSON-RPC requests: the card's url, and
	// the path the handler answers them at. An absolute URL
	// ("https://agents.example.com/a2a") is the card's as it is; a path
	// ("/a2a") is completed from the request that fetches the card (its
	// Host, and https when it came over TLS), for a server that does not
	// know its public name. Empty means DefaultPath.
	URL string

	// Name, Description and Version are the card's. Empty means derived:
	// the agent's Config.Name (or "agent"), a description of the agent
	// from its tools, and "1.0.0".
	Name, Description, Version string

	// Skills are the card's skills. Nil means derived: one for the agent,
	// then one per tool, with its name and description.
	Skills []a2a.AgentSkill

	// Card, when set, edits the card once it is derived: to add a
	// provider, security schemes (say how Authenticate wants to be
	// spoken to), documentation, more skills.
	Card func(*a2a.AgentCard)

	// Push configures push notifications: on, to public addresses only,
	// unless it says otherwise.
	Push PushOptions
}

// Handler returns the A2A handler of s: GET CardPath serves the agent
// card, POST to the path of Options.URL serves JSON-RPC (message/send,
// message/stream, tasks/get, tasks/cancel, tasks/resubscribe, the push
// notification methods), and the 1.0 bindings under it. Mount it
// at both paths, or at "/":
//
//	h := a2aagent.Handler(srv, nil)
//	http.Handle(a2aagent.CardPath, h)
//	http.Handle(a2aagent.DefaultPath, h)
//
// Under a prefix, the card is wherever its path ends with CardPath, and
// Options.URL says the whole path of the endpoint:
//
//	http.Handle("/travel/", a2aagent.Handler(srv, &a2aagent.Options{URL: "/travel/a2a"}))
//
// Pages of the origins agentserver.Config.AllowedOrigins lists may call
// it (see agentserver.Server.CORS). It panics when opts.URL is neither an
// absolute URL nor a path.
func Handler(s *agentserver.Server, opts *Options) http.Handler {
	if opts == nil {
		opts = &Options{}
	}
	raw := opts.URL
	if raw == "" {
		raw = DefaultPath
	}
	u, err := url.Parse(raw)
	if err != nil || (u.IsAbs() && u.Host == "") || (!u.IsAbs() && u.Host != "") {
		panic(fmt.Sprintf("a2aagent: Options.URL %q is neither an absolute URL nor a path", opts.URL))
	}
	if u.Path == "" {
		u.Path = "/"
	}
	base := strings.TrimSuffix(u.Path, "/")
	h := &handler{s: s, url: u, logger: s.Config().Logger, v1Path: base + v1JSONRPCSuffix, restPath: base + v1RESTSuffix}
	h.card = deriveCard(s, opts)
	h.push = newPusher(s, opts.Push, h.logger)
	h.push.base = u
	h.v1JSONRPC, h.v1REST = newV1(h)
	return s.CORS(h)
}

type handler struct {
	s      *agentserver.Server
	url    *url.URL // the card's url: absolute, or a path
	card   *a2a.AgentCard
	logger *slog.Logger

	// The 1.0 bindings: JSON-RPC at v1Path, HTTP+JSON under restPath.
	v1Path, restPath  string
	v1JSONRPC, v1REST http.Handler

	push *pusher
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bodytimeout.Limit(w, r, h.s.Config().BodyTimeout) // a body refused unread is drained within it too
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, CardPath): // at the root, or under the prefix the handler is mounted at
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		h.serveCard(w, r)
	case p == h.url.Path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			e := newRPCError(codeInvalidRequest, "A2A's JSON-RPC is sent with POST")
			e.status = http.StatusMethodNotAllowed
			h.writeResponse(w, r, nil, nil, e)
			return
		}
		h.s.Stream(w, r, func() (agentserver.Cursor, agentserver.Encoder, error) {
			cur, enc := h.serveRPC(w, r)
			return cur, enc, nil
		})
	case p == h.v1Path:
		h.serveV1(w, r, h.v1JSONRPC, false)
	case strings.HasPrefix(p, h.restPath+"/"):
		h.serveV1(w, r, h.v1REST, true)
	default:
		http.NotFound(w, r)
	}
}

// serveRPC answers one JSON-RPC request, of the user the request comes
// from: it writes the answer, or returns the stream that answers it. It
// runs on a goroutine of Server.Stream's, so that the stack that decoding
// and starting a run grow is not kept while the stream is open.
func (h *handler) serveRPC(w http.ResponseWriter, r *http.Request) (agentserver.Cursor, agentserver.Encoder) {
	user, err := h.s.User(r)
	if err != nil {
		h.writeResponse(w, r, nil, nil, rpcErrorOf(err))
		return nil, nil
	}
	req, e := decodeRequest(h.s, r)
	if e != nil {
		var id json.RawMessage
		if req != nil {
			id = req.ID
		}
		h.writeResponse(w, r, id, nil, e)
		return nil, nil
	}
	ctx := r.Context()
	switch req.Method {
	case "message/stream":
		var p a2a.MessageSendParams
		if err := decodeParams(req, &p); err != nil {
			h.writeStreamError(w, r, req.ID, rpcErrorOf(err))
			return nil, nil
		}
		pc, err := messagePushV0(&p)
		if err != nil {
			h.writeStreamError(w, r, req.ID, rpcErrorOf(err))
			return nil, nil
		}
		return h.stream(w, r, req.ID, user, &p, pc)
	case "tasks/resubscribe":
		var p a2a.TaskIDParams
		if err := decodeParams(req, &p); err != nil {
			h.writeStreamError(w, r, req.ID, rpcErrorOf(err))
			return nil, nil
		}
		return h.resubscribe(w, r, req.ID, user, p.ID)
	}
	var result any
	switch req.Method {
	case "message/send":
		var p a2a.MessageSendParams
		if err = decodeParams(req, &p); err == nil {
			var pc *pushConfig
			if pc, err = messagePushV0(&p); err == nil {
				result, err = h.send(ctx, user, &p, pc)
			}
		}
	case "tasks/get":
		var p a2a.TaskQueryParams
		if err = decodeParams(req, &p); err == nil {
			result, err = h.get(ctx, user, p.ID)
		}
	case "tasks/cancel":
		var p a2a.TaskIDParams
		if err = decodeParams(req, &p); err == nil {
			result, err = h.cancel(ctx, user, p.ID)
		}
	case "tasks/pushNotificationConfig/set":
		var p a2a.TaskPushConfig
		if err = decodeParams(req, &p); err == nil {
			result, err = h.setPushV0(ctx, user, &p)
		}
	case "tasks/pushNotificationConfig/get":
		var p a2a.GetTaskPushConfigParams
		if err = decodeParams(req, &p); err == nil {
			id := first(p.ConfigID, string(p.TaskID))
			var c *pushConfig
			if c, err = h.push.get(ctx, user, string(p.TaskID), id); err == nil {
				result = c.v0()
			}
		}
	case "tasks/pushNotificationConfig/list":
		var p a2a.ListTaskPushConfigParams
		if err = decodeParams(req, &p); err == nil {
			var cs []*pushConfig
			if cs, err = h.push.list(ctx, user, string(p.TaskID)); err == nil {
				out := []*a2a.TaskPushConfig{}
				for _, c := range cs {
					out = append(out, c.v0())
				}
				result = out
			}
		}
	case "tasks/pushNotificationConfig/delete":
		var p a2a.DeleteTaskPushConfigParams
		if err = decodeParams(req, &p); err == nil {
			err = h.push.delete(ctx, user, string(p.TaskID), p.ConfigID)
		}
	case "agent/getAuthenticatedExtendedCard":
		err = newRPCError(codeNoExtendedCard, "this agent has no authenticated extended card")
	default:
		err = newRPCError(codeMethodNotFound, "method %q not found", req.Method)
	}
	if err != nil {
		h.writeResponse(w, r, req.ID, nil, rpcErrorOf(err))
		return nil, nil
	}
	h.writeResponse(w, r, req.ID, result, nil)
	return nil, nil
}

// decodeParams reads a request's params into v.
func decodeParams(req *rpcRequest, v any) error {
	if len(req.Params) == 0 || string(req.Params) == "null" {
		return invalidParams("%s needs params", req.Method)
	}
	if err := json.Unmarshal(req.Params, v); err != nil {
		return invalidParams("params: %v", err)
	}
	return nil
}

// submit applies a message to its thread: it starts a task, or answers
// the task that waits for input (the message's taskId), and returns the
// run and the cursor its response reads (the caller reads or closes it).
func (h *handler) submit(ctx context.Context, user string, m *a2a.Message) (agentserver.Attachment, error) {
	_, maxParts := h.s.Limits()
	if err := checkMessage(m, maxParts); err != nil {
		return agentserver.Attachment{}, err
	}
	if m.TaskID == "" {
		c, err := content(m)
		if err != nil {
			return agentserver.Attachment{}, err
		}
		thread := m.ContextID
		if thread == "" {
			thread = a2a.NewContextID()
		}
		// A task is looked up after its end (tasks/get): its run keeps its
		// log.
		att, err := h.s.Submit(ctx, user, agentserver.Request{Thread: thread, Message: c, KeepLog: true})
		if errors.Is(err, agentserver.ErrBusy) {
			if cur, cerr := h.s.Current(ctx, user, thread); cerr == nil {
				if cur.State == agentserver.StateWaiting {
					return att, newRPCError(codeUnsupported, "task %s of context %s waits for input: answer it with a message of taskId %s", cur.ID, thread, cur.ID)
				}
				return att, newRPCError(codeUnsupported, "task %s of context %s is working: a context takes one task at a time; wait for its end, or cancel it", cur.ID, thread)
			}
		}
		return att, err
	}
	info, err := h.s.Run(ctx, user, string(m.TaskID))
	if err != nil {
		return agentserver.Attachment{}, taskNotFound(m.TaskID, err)
	}
	switch {
	case m.ContextID != "" && m.ContextID != info.Thread:
		return agentserver.Attachment{}, invalidParams("task %s belongs to context %s, not %s", info.ID, info.Thread, m.ContextID)
	case info.State.Over():
		return agentserver.Attachment{}, newRPCError(codeUnsupported, "task %s is %s: it takes no more messages; send a new message in its context (contextId %s) to go on",
			info.ID, taskState(info), info.Thread)
	case info.State != agentserver.StateWaiting:
		return agentserver.Attachment{}, newRPCError(codeUnsupported, "task %s is working and waits for no input: wait for its end, or cancel it", info.ID)
	}
	ds, err := decisions(m, info.Pending)
	if err != nil {
		return agentserver.Attachment{}, err
	}
	if len(ds) == 0 {
		return agentserver.Attachment{}, invalidParams("task %s waits for decisions about calls %s: answer each with a function_response data part (metadata adk_type function_response) naming it by its id",
			info.ID, callIDs(info.Pending))
	}
	return h.s.Submit(ctx, user, agentserver.Request{Thread: info.Thread, Decisions: ds})
}

func callIDs(ps []agentserver.Pending) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.Call.ID + " (" + p.Call.Name + ")"
	}
	return s
}

// taskNotFound is the error of a task the user has not: unknown,
// another user's, or over for longer than the server keeps runs.
func taskNotFound(id a2a.TaskID, err error) error {
	if errors.Is(err, agentserver.ErrNotFound) {
		return newRPCError(codeTaskNotFound, "task %q not found", id)
	}
	return err
}

// taskState is the A2A state of a run, for messages.
func taskState(info agentserver.RunInfo) a2a.TaskState {
	switch info.State {
	case agentserver.StateDone:
		return a2a.TaskStateCompleted
	case agentserver.StateCancelled:
		return a2a.TaskStateCanceled
	case agentserver.StateFailed:
		return a2a.TaskStateFailed
	case agentserver.StateWaiting:
		return a2a.TaskStateInputRequired
	}
	return a2a.TaskStateWorking
}

// send answers message/send: the task once its run ends or waits for
// input, or at once when the configuration says not to block; pc, when
// not nil, is the push config the message sets.
func (h *handler) send(ctx context.Context, user string, p *a2a.MessageSendParams, pc *pushConfig) (*a2a.Task, error) {
	if pc != nil {
		if err := h.push.prepare(ctx, user, pc); err != nil {
			return nil, err
		}
	}
	att, err := h.submit(ctx, user, p.Message)
	if err != nil {
		return nil, err
	}
	h.messagePush(ctx, user, att, pc)
	// The answer is the whole task, folded from the log's start: the
	// cursor Submit attached (from the decisions, for a task that goes
	// on) is closed once snapshot has its own.
	defer att.Cursor.Close()
	block := p.Config == nil || p.Config.Blocking == nil || *p.Config.Blocking
	return h.snapshot(ctx, user, att.Run.ID, block)
}

// get answers tasks/get.
func (h *handler) get(ctx context.Context, user string, id a2a.TaskID) (*a2a.Task, error) {
	if id == "" {
		return nil, invalidParams("params.id is missing")
	}
	return h.snapshot(ctx, user, string(id), false)
}

// cancel answers tasks/cancel: it stops the run and its tools, and
// returns the task once the run has ended.
func (h *handler) cancel(ctx context.Context, user string, id a2a.TaskID) (*a2a.Task, error) {
	if id == "" {
		return nil, invalidParams("params.id is missing")
	}
	info, err := h.s.Run(ctx, user, string(id))
	if err != nil {
		return nil, taskNotFound(id, err)
	}
	if info.State.Over() && info.State != agentserver.StateCancelled {
		return nil, newRPCError(codeTaskNotCancelable, "task %s is %s: it cannot be canceled", id, taskState(info))
	}
	if err := h.s.Cancel(ctx, user, string(id)); err != nil {
		return nil, taskNotFound(id, err)
	}
	return h.snapshot(ctx, user, string(id), true)
}

// snapshot returns the task of run id, folded from its log: as it stands,
// or, when wait is set, once the run has ended or waits for input.
func (h *handler) snapshot(ctx context.Context, user, id string, wait bool) (*a2a.Task, error) {
	info, err := h.s.Run(ctx, user, id)
	if err != nil {
		return nil, taskNotFound(a2a.TaskID(id), err)
	}
	cur, err := h.s.Attach(ctx, user, id, 0)
	if err != nil {
		return nil, taskNotFound(a2a.TaskID(id), err)
	}
	defer cur.Close()
	tr := newTranslator(h.files(), info)
	snap := newSnapshot(tr, info)
	for {
		rec, ok, err := cur.Next(ctx, waitFor(wait))
		if errors.Is(err, io.EOF) || (!ok && err == nil && !wait) {
			return &snap.task, nil
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		last := rec.Kind == agentserver.KindDone || rec.Kind == agentserver.KindPause && cur.Buffered() == 0
		snap.fold(tr, &rec, last)
		if last && wait {
			return &snap.task, nil
		}
	}
}

// waitFor is how long a read of the log waits for a record: not at all
// for a snapshot as it stands, a long while (the loop goes on) otherwise.
func waitFor(wait bool) time.Duration {
	if wait {
		return time.Minute
	}
	return 0
}
