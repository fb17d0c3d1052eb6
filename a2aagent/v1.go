package a2aagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/toolnexus/toolnexus-go/agentserver"
)

// A2A 1.0 is served by a2a-go/v2's transports (a2asrv's JSON-RPC and
// HTTP+JSON handlers) over v1Handler, an a2asrv.RequestHandler that does
// what the 0.3 handler does, in the same code: requests are converted to
// 0.3's types (a2av0's converters), and tasks and events back to 1.0's.

// The paths of the 1.0 bindings, after the path of Options.URL.
const (
	v1JSONRPCSuffix = "/v1"
	v1RESTSuffix    = "/v1/rest"
)

// userKey is the context key of the authenticated user of a 1.0 request.
type userKey struct{}

// v1Handler serves A2A 1.0 requests: an a2asrv.RequestHandler.
type v1Handler struct{ h *handler }

var _ a2asrv.RequestHandler = (*v1Handler)(nil)

// newV1 returns the 1.0 JSON-RPC and HTTP+JSON handlers of h.
func newV1(h *handler) (jsonrpc, rest http.Handler) {
	v := &v1Handler{h}
	ka := a2asrv.WithTransportKeepAlive(h.s.Config().KeepAlive)
	return a2asrv.NewJSONRPCHandler(v, ka), http.StripPrefix(h.restPath, a2asrv.NewRESTHandler(v, ka))
}

// serveV1 authenticates r, reads its body within the server's limits,
// and hands it to next, one of the 1.0 bindings.
func (h *handler) serveV1(w http.ResponseWriter, r *http.Request, next http.Handler, rest bool) {
	user, err := h.s.User(r)
	if err != nil {
		h.writeV1Error(w, r, rest, err)
		return
	}
	// A POST of no body (HTTP+JSON's cancel and subscribe, as a2a-go's
	// and @a2a-js/sdk's clients send them, of any type or none) has
	// nothing to read: its binding answers it. (A page of another site
	// cannot send one: Server.CORS refuses it first.)
	var body json.RawMessage
	if r.Method == http.MethodPost && r.ContentLength != 0 {
		dr := r
		// 1.0's media type is JSON too.
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/a2a+json" {
			dr = r.Clone(r.Context())
			dr.Header.Set("Content-Type", "application/json")
		}
		var raw json.RawMessage
		if err := h.s.DecodeJSON(dr, &raw); err != nil {
			h.writeV1Error(w, r, rest, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		body = raw
	}
	if v, ok := v1Version(r); !ok {
		h.writeVersionError(w, rest, body, v)
		return
	}
	ctx := context.WithValue(r.Context(), userKey{}, user)
	vw := &v1Writer{ResponseWriter: w, timeout: h.s.Config().WriteTimeout, f: &refusal{}, rest: rest}
	ctx = context.WithValue(ctx, refusalKey{}, vw.f)
	next.ServeHTTP(vw, r.WithContext(ctx))
}

// v1Version returns the A2A version r asks for (its A2A-Version header,
// or the query parameter of that name, as A2A 1.0 §3.6.1 allows), and
// whether the 1.0 bindings speak it: 1.0, a patch of it (§3.6: patch
// versions are not negotiated), or none. A2A 1.0 §3.6.2 reads an empty
// version as 0.3; the 1.0 bindings, at a URL of their own that speaks
// only 1.0 (0.3 is served at Options.URL), take it as 1.0, the only
// version they speak, as a2a-go/v2's server does.
func v1Version(r *http.Request) (string, bool) {
	v := r.Header.Get(a2av1.SvcParamVersion)
	if v == "" {
		v = r.URL.Query().Get(a2av1.SvcParamVersion)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return v, true
	}
	minor, ok := strings.CutPrefix(v, ProtocolVersion)
	if ok && minor != "" {
		patch, dot := strings.CutPrefix(minor, ".")
		_, err := strconv.ParseUint(patch, 10, 32)
		ok = dot && err == nil
	}
	return v, ok
}

// writeVersionError answers a 1.0 request that asks for a version the 1.0
// bindings do not speak with A2A's VersionNotSupportedError (§3.3.2):
// -32009 on JSON-RPC (its data an ErrorInfo, VERSION_NOT_SUPPORTED; the
// request's id, when body holds it), and on HTTP+JSON a google.rpc.Status
// of 400, FAILED_PRECONDITION (§5.4), with the same ErrorInfo.
func (h *handler) writeVersionError(w http.ResponseWriter, rest bool, body json.RawMessage, v string) {
	msg := fmt.Sprintf("A2A version %.20q is not spoken here: this interface speaks A2A %s (A2A-Version: %s, or none); A2A %s is served at %s",
		v, ProtocolVersion, ProtocolVersion, LegacyProtocolVersion, h.url.Path)
	info := errordetails.NewErrorInfo(a2av1.ErrorReason(a2av1.ErrVersionNotSupported), a2av1.ProtocolDomain, nil)
	if rest {
		writeStatus(w, http.StatusBadRequest, "FAILED_PRECONDITION", a2av1.ErrVersionNotSupported, msg, nil)
		return
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(body, &req)
	id := validID(req.ID)
	if id == nil {
		id = nullID
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": codeVersionNotSupported, "message": msg, "data": []any{info}}})
	b = append(b, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK) // a JSON-RPC error, as a2a-go/v2's server answers one
	w.Write(b)
}

// writeV1Error answers a 1.0 request refused before its binding reads it
// (authentication, a body too large, of another type, late or not JSON)
// as its binding answers errors: a JSON-RPC error, or a google.rpc.Status
// for HTTP+JSON; both with the refusal's HTTP status.
func (h *handler) writeV1Error(w http.ResponseWriter, r *http.Request, rest bool, err error) {
	if !rest {
		if errors.Is(err, agentserver.ErrTooManyBodies) {
			h.writeResponse(w, r, nullID, nil, rpcErrorOf(err)) // 503 or 429, and its code
			return
		}
		e := newRPCError(codeInvalidRequest, "%s", err.Error())
		var se *agentserver.Error
		if errors.As(err, &se) {
			e.Message, e.Data["error"], e.status = se.Message, se.Message, se.Status
			if se.Code == "bad_json" {
				e.Code = codeParseError
			}
		}
		h.writeResponse(w, r, nullID, nil, e)
		return
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var code any
	var se *agentserver.Error
	if errors.As(err, &se) {
		status, msg = se.Status, se.Message
		if errors.Is(err, agentserver.ErrTooManyBodies) {
			code = se.Code
		}
	}
	target := a2av1.ErrInvalidRequest
	if status == http.StatusUnauthorized {
		target = a2av1.ErrUnauthenticated
	}
	writeStatus(w, status, grpcStatuses[status], target, msg, code)
}

func (v *v1Handler) user(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// v1Error is how A2A 1.0 says an error: a2a-go/v2's error, and the
// HTTP and gRPC statuses of HTTP+JSON's google.rpc.Status (as a2a-go/v2
// maps them).
type v1Error struct {
	err    error
	status int
	grpc   string
}

// v1Errors are the 1.0 errors of the JSON-RPC codes.
var v1Errors = map[int]v1Error{
	codeParseError:        {a2av1.ErrParseError, http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeInvalidRequest:    {a2av1.ErrInvalidRequest, http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeMethodNotFound:    {a2av1.ErrMethodNotFound, http.StatusNotImplemented, "UNIMPLEMENTED"},
	codeInvalidParams:     {a2av1.ErrInvalidParams, http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeInternalError:     {a2av1.ErrInternalError, http.StatusInternalServerError, "INTERNAL"},
	codeServerError:       {a2av1.ErrServerError, http.StatusInternalServerError, "INTERNAL"},
	codeTaskNotFound:      {a2av1.ErrTaskNotFound, http.StatusNotFound, "NOT_FOUND"},
	codeTaskNotCancelable: {a2av1.ErrTaskNotCancelable, http.StatusBadRequest, "FAILED_PRECONDITION"},
	codePushNotSupported:  {a2av1.ErrPushNotificationNotSupported, http.StatusBadRequest, "FAILED_PRECONDITION"},
	codeUnsupported:       {a2av1.ErrUnsupportedOperation, http.StatusBadRequest, "FAILED_PRECONDITION"},
	codeNoExtendedCard:    {a2av1.ErrExtendedCardNotConfigured, http.StatusBadRequest, "FAILED_PRECONDITION"},
}

// grpcStatuses name the HTTP statuses of the refusals agentserver makes.
var grpcStatuses = map[int]string{
	http.StatusUnauthorized: "UNAUTHENTICATED", http.StatusForbidden: "PERMISSION_DENIED",
	http.StatusRequestTimeout: "DEADLINE_EXCEEDED", http.StatusTooManyRequests: "RESOURCE_EXHAUSTED",
	http.StatusServiceUnavailable: "UNAVAILABLE", http.StatusInternalServerError: "INTERNAL",
}

// err returns the 1.0 error of err: of the same code and message as 0.3's
// (data.code, when the 0.3 error has one, in the error's details), and
// "internal error" for an error whose text is not for the client, which
// is logged.
func (v *v1Handler) err(ctx context.Context, err error) error {
	refused(ctx, err, false)
	e := rpcErrorOf(err)
	if e.Code == codeInternalError {
		if e.cause != nil {
			v.h.logger.LogAttrs(ctx, slog.LevelError, "a2aagent: request failed", slog.Any("error", e.cause))
		}
		return a2av1.NewError(a2av1.ErrInternalError, "internal error")
	}
	ae := a2av1.NewError(v1Errors[e.Code].err, e.Message)
	if code, ok := e.Data["code"]; ok {
		ae = ae.WithDetails(map[string]any{"code": code})
	}
	return ae
}

// writeStatus answers an HTTP+JSON request with a google.rpc.Status, as
// a2a-go/v2 writes them: its details hold code (a refusal's, as
// too_many_runs), when not empty, and an ErrorInfo naming the reason of
// target.
func writeStatus(w http.ResponseWriter, status int, grpc string, target error, msg string, code any) {
	if grpc == "" {
		grpc = "INVALID_ARGUMENT"
	}
	var details []any
	if code != nil {
		details = append(details, errordetails.NewFromStruct(map[string]any{"code": code}))
	}
	details = append(details, errordetails.NewErrorInfo(a2av1.ErrorReason(target), a2av1.ProtocolDomain, nil))
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "status": grpc, "message": msg, "details": details}})
	body = append(body, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// A refusal holds what a 1.0 request's answer needs that a2a-go/v2's
// transports do not write: the HTTP status of a refusal that has one
// (429 or 503, as 0.3 answers them), and, for HTTP+JSON, the error to
// answer with, of that status, rather than a2a-go/v2's (a 500), or
// rather than a stream of one event, the error, for a stream that failed
// to start (an event @a2a-js/sdk does not read as an error; the status,
// 404 for a task not found, both clients read).
type refusal struct {
	status int
	err    error
}

type refusalKey struct{}

// refused records err, the error a 1.0 request failed with; start says
// the request was a stream that failed to start.
func refused(ctx context.Context, err error, start bool) {
	f, ok := ctx.Value(refusalKey{}).(*refusal)
	if !ok {
		return
	}
	if e := rpcErrorOf(err); e.status != 0 {
		f.status, f.err = e.status, err
	}
	if start {
		f.err = err
	}
}

// v1Writer is the ResponseWriter of the 1.0 bindings: each write has the
// server's write deadline (a client that reads nothing for
// Config.WriteTimeout is dropped), a refusal has its HTTP status, and,
// for HTTP+JSON, a refusal of its own status, or a stream that failed to
// start, is answered with its error and status, what the binding writes
// then dropped.
type v1Writer struct {
	http.ResponseWriter
	timeout time.Duration
	f       *refusal
	rest    bool
	wrote   bool // the status
	failed  bool
}

func (w *v1Writer) WriteHeader(code int) {
	switch {
	case w.failed || w.wrote:
	case w.rest && w.f.err != nil:
		w.failed, w.wrote = true, true
		e := rpcErrorOf(w.f.err)
		m := v1Errors[e.Code]
		if e.Code == codeInternalError {
			e.Message = "internal error" // (logged by v1Handler.err)
		}
		if e.status != 0 {
			m.status, m.grpc = e.status, grpcStatuses[e.status]
		}
		writeStatus(w.ResponseWriter, m.status, m.grpc, m.err, e.Message, e.Data["code"])
	default:
		w.wrote = true
		if w.f.status != 0 {
			code = w.f.status
		}
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *v1Writer) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.failed {
		return len(b), nil
	}
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, which the bindings' streams need.
func (w *v1Writer) Flush() {
	if w.failed {
		return
	}
	rc := http.NewResponseController(w.ResponseWriter)
	_ = rc.SetWriteDeadline(time.Now().Add(w.timeout))
	_ = rc.Flush()
}

// Unwrap returns the ResponseWriter w wraps, for http.ResponseController.
func (w *v1Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// SendMessage implements a2asrv.RequestHandler: message/send's answer.
func (v *v1Handler) SendMessage(ctx context.Context, req *a2av1.SendMessageRequest) (a2av1.SendMessageResult, error) {
	if req.Message == nil {
		return nil, v.err(ctx, invalidParams("params.message is missing"))
	}
	pc, err := messagePushV1(req)
	if err != nil {
		return nil, v.err(ctx, err)
	}
	t, err := v.h.send(ctx, v.user(ctx), a2av0.FromV1SendMessageRequest(req), pc)
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return v.task(ctx, t)
}

// GetTask implements a2asrv.RequestHandler: tasks/get's answer.
func (v *v1Handler) GetTask(ctx context.Context, req *a2av1.GetTaskRequest) (*a2av1.Task, error) {
	t, err := v.h.get(ctx, v.user(ctx), a2a.TaskID(req.ID))
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return v.task(ctx, t)
}

// CancelTask implements a2asrv.RequestHandler: tasks/cancel's answer.
func (v *v1Handler) CancelTask(ctx context.Context, req *a2av1.CancelTaskRequest) (*a2av1.Task, error) {
	t, err := v.h.cancel(ctx, v.user(ctx), a2a.TaskID(req.ID))
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return v.task(ctx, t)
}

func (v *v1Handler) task(ctx context.Context, t *a2a.Task) (*a2av1.Task, error) {
	out, err := a2av0.ToV1Task(t)
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return out, nil
}

// Page sizes of ListTasks, as A2A 1.0 says.
const (
	defaultListPageSize = 50
	maxListPageSize     = 100
)

// ListTasks implements a2asrv.RequestHandler: the user's tasks that the
// server keeps (agentserver.Server.Runs), the latest started first, of
// one context with contextId, in pages whose token is the last task's
// start and id.
func (v *v1Handler) ListTasks(ctx context.Context, req *a2av1.ListTasksRequest) (*a2av1.ListTasksResponse, error) {
	user := v.user(ctx)
	size := req.PageSize
	switch {
	case size < 0 || size > maxListPageSize:
		return nil, v.err(ctx, invalidParams("pageSize must be between 1 and %d", maxListPageSize))
	case size == 0:
		size = defaultListPageSize
	}
	var after *pageToken
	if req.PageToken != "" {
		t, err := parsePageToken(req.PageToken)
		if err != nil {
			return nil, v.err(ctx, err)
		}
		after = &t
	}
	runs, err := v.h.s.Runs(ctx, user)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, v.err(ctx, newRPCError(codeUnsupported, "this server cannot list tasks: its runner does not list runs"))
	}
	if err != nil {
		return nil, v.err(ctx, err)
	}
	resp := &a2av1.ListTasksResponse{Tasks: []*a2av1.Task{}, PageSize: size}
	for _, info := range runs {
		if after != nil && !after.before(info) || req.ContextID != "" && info.Thread != req.ContextID {
			continue
		}
		if len(resp.Tasks) == size && req.Status == "" && req.StatusTimestampAfter == nil {
			resp.TotalSize++ // counted, for totalSize, without reading its log
			continue
		}
		t, err := v.h.snapshot(ctx, user, info.ID, false)
		if err != nil && rpcErrorOf(err).Code == codeTaskNotFound {
			continue // over, and forgotten, meanwhile
		}
		if err != nil {
			return nil, v.err(ctx, err)
		}
		vt, err := v.task(ctx, t)
		if err != nil {
			return nil, err
		}
		if req.Status != "" && vt.Status.State != req.Status ||
			req.StatusTimestampAfter != nil && (vt.Status.Timestamp == nil || !vt.Status.Timestamp.After(*req.StatusTimestampAfter)) {
			continue
		}
		resp.TotalSize++
		if len(resp.Tasks) == size {
			continue // counted, for totalSize
		}
		if !req.IncludeArtifacts {
			vt.Artifacts = nil
		}
		resp.Tasks = append(resp.Tasks, vt)
		if len(resp.Tasks) == size {
			resp.NextPageToken = pageToken{info.Started, info.ID}.String()
		}
	}
	if resp.TotalSize == len(resp.Tasks) {
		resp.NextPageToken = ""
	}
	return resp, nil
}

// A pageToken is where a page of ListTasks ended: its last task's start
// and id.
type pageToken struct {
	started time.Time
	id      string
}

func (p pageToken) String() string {
	return strconv.FormatInt(p.started.UnixNano(), 10) + "." + p.id
}

func parsePageToken(s string) (pageToken, error) {
	ns, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return pageToken{}, invalidParams("pageToken %q is not one this server gave", s)
	}
	return pageToken{time.Unix(0, n), id}, nil
}

// before reports whether run comes after the page that ended at p, in
// Server.Runs's order: started earlier, or at once with a smaller id.
func (p pageToken) before(run agentserver.RunInfo) bool {
	if a, b := run.Started.UnixNano(), p.started.UnixNano(); a != b {
		return a < b
	}
	return run.ID < p.id
}

// SendStreamingMessage implements a2asrv.RequestHandler: message/stream's
// events.
func (v *v1Handler) SendStreamingMessage(ctx context.Context, req *a2av1.SendMessageRequest) iter.Seq2[a2av1.Event, error] {
	if req.Message == nil {
		return v.startFailed(ctx, invalidParams("params.message is missing"))
	}
	pc, err := messagePushV1(req)
	if err != nil {
		return v.startFailed(ctx, err)
	}
	cur, enc, err := v.h.startStream(ctx, v.user(ctx), a2av0.FromV1Message(req.Message), pc)
	if err != nil {
		return v.startFailed(ctx, err)
	}
	return v.events(ctx, cur, enc)
}

// SubscribeToTask implements a2asrv.RequestHandler: tasks/resubscribe's
// events.
func (v *v1Handler) SubscribeToTask(ctx context.Context, req *a2av1.SubscribeToTaskRequest) iter.Seq2[a2av1.Event, error] {
	cur, enc, err := v.h.startResubscribe(ctx, v.user(ctx), a2a.TaskID(req.ID))
	if err != nil {
		return v.startFailed(ctx, err)
	}
	return v.events(ctx, cur, enc)
}

// startFailed returns the stream of a request that failed to start with
// err: err, as the binding says it.
func (v *v1Handler) startFailed(ctx context.Context, err error) iter.Seq2[a2av1.Event, error] {
	refused(ctx, err, true)
	return func(yield func(a2av1.Event, error) bool) { yield(nil, v.err(ctx, err)) }
}

// events yields the events of a stream: enc's opening, then those of the
// records cur reads, to the run's end or the input it waits for.
func (v *v1Handler) events(ctx context.Context, cur agentserver.Cursor, enc *encoder) iter.Seq2[a2av1.Event, error] {
	return func(yield func(a2av1.Event, error) bool) {
		defer cur.Close()
		emit := func(ev a2a.Event) bool {
			out, err := a2av0.ToV1Event(ev)
			if err != nil {
				yield(nil, v.err(ctx, err))
				return false
			}
			return yield(out, nil)
		}
		for _, ev := range enc.opening {
			if !emit(ev) {
				return
			}
		}
		for {
			rec, ok, err := cur.Next(ctx, time.Minute)
			if err != nil {
				if ctx.Err() == nil {
					msg := "the stream was cut: the task's log could not be read; GetTask says where the task stands"
					yield(nil, a2av1.NewError(a2av1.ErrInternalError, msg))
				}
				return
			}
			if !ok {
				continue
			}
			last := rec.Kind == agentserver.KindDone || rec.Kind == agentserver.KindPause && cur.Buffered() == 0
			for _, ev := range enc.tr.events(&rec, last) {
				if !emit(ev) {
					return
				}
			}
			if last {
				return
			}
		}
	}
}

// GetTaskPushConfig implements a2asrv.RequestHandler: the config of the
// user's task.
func (v *v1Handler) GetTaskPushConfig(ctx context.Context, req *a2av1.GetTaskPushConfigRequest) (*a2av1.PushConfig, error) {
	c, err := v.h.push.get(ctx, v.user(ctx), string(req.TaskID), req.ID)
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return c.v1c(), nil
}

// ListTaskPushConfigs implements a2asrv.RequestHandler: the configs of
// the user's task, all in one page (a task holds PushOptions.MaxPerTask
// at most).
func (v *v1Handler) ListTaskPushConfigs(ctx context.Context, req *a2av1.ListTaskPushConfigRequest) (*a2av1.ListTaskPushConfigResponse, error) {
	cs, err := v.h.push.list(ctx, v.user(ctx), string(req.TaskID))
	if err != nil {
		return nil, v.err(ctx, err)
	}
	out := &a2av1.ListTaskPushConfigResponse{Configs: []*a2av1.PushConfig{}}
	for _, c := range cs {
		out.Configs = append(out.Configs, c.v1c())
	}
	return out, nil
}

// CreateTaskPushConfig implements a2asrv.RequestHandler: it sets a config
// of the user's task, replacing the config of the same id.
func (v *v1Handler) CreateTaskPushConfig(ctx context.Context, req *a2av1.PushConfig) (*a2av1.PushConfig, error) {
	c, err := pushFromV1(req)
	if err == nil {
		c, err = v.h.push.set(ctx, v.user(ctx), c)
	}
	if err != nil {
		return nil, v.err(ctx, err)
	}
	return c.v1c(), nil
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler: it deletes a
// config of the user's task.
func (v *v1Handler) DeleteTaskPushConfig(ctx context.Context, req *a2av1.DeleteTaskPushConfigRequest) error {
	if err := v.h.push.delete(ctx, v.user(ctx), string(req.TaskID), req.ID); err != nil {
		return v.err(ctx, err)
	}
	return nil
}

// GetExtendedAgentCard implements a2asrv.RequestHandler: there is none.
func (v *v1Handler) GetExtendedAgentCard(context.Context, *a2av1.GetExtendedAgentCardRequest) (*a2av1.AgentCard, error) {
	return nil, a2av1.NewError(a2av1.ErrExtendedCardNotConfigured, "this agent has no authenticated extended card")
}
