package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2aclientv1 "github.com/a2aproject/a2a-go/v2/a2aclient"
	agentcardv1 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// Defaults of the RemoteOptions fields whose zero value means "the
// default".
const (
	DefaultMaxResponseBytes = 16 << 20
	DefaultMaxConversations = 10000
)

// cancelTimeout bounds the tasks/cancel a call sends the remote agent
// when it is stopped.
const cancelTimeout = 5 * time.Second

// RemoteOptions configure a RemoteTool. The zero value is usable.
type RemoteOptions struct {
	// HTTPClient sends every request, the card's and the agent's: give
	// one whose transport authenticates (adds a token, presents a client
	// certificate). Its transport sees each request's context, which names
	// the calling run's conversation (agent.Conversation) and, for a run
	// served by agentserver, its user (agentserver.RunUser): a token per
	// user can be chosen there. The card's url receives the same
	// credentials: point the tool at cards you trust. Nil means
	// http.DefaultClient. A call is bounded by its context, not by the
	// client: set agent.Config.ToolTimeout.
	HTTPClient *http.Client

	// Name and Description are the tool's. Empty means the card's: its
	// name, made a valid tool name ("Travel Agent" is travel_agent), and
	// its description with its skills.
	Name, Description string

	// MaxResponseBytes bounds what one response of the remote agent may
	// hold, a stream counted whole: a larger one fails the call. Zero means
	// DefaultMaxResponseBytes (16 MiB).
	MaxResponseBytes int64

	// MaxConversations bounds the remote conversations the tool
	// remembers, one per conversation of ours; the least recently used is
	// forgotten first, and its next call starts a new remote conversation.
	// A conversation a call holds or waits for is never forgotten: while
	// more conversations than the bound have calls in flight, the tool
	// remembers each of them until its calls end. Zero means
	// DefaultMaxConversations (10,000).
	MaxConversations int
}

// remoteAgent is the remote agent a RemoteTool calls.
type remoteAgent struct {
	name     string // the tool's, for messages
	card     *a2a.AgentCard
	client   remoteClient
	convs    *conversations
	maxBytes int64
}

// RemoteTool returns a tool that hands a request to the remote A2A agent
// whose card is at cardURL: the agent's base URL (its card is then at
// CardPath under it) or the card's own URL, ending in .json. The card is
// fetched now, and says which version the tool speaks: A2A 1.0 when it
// lists an interface of 1.0 (supportedInterfaces; over JSON-RPC or
// HTTP+JSON, whichever it lists first), through a2a-go/v2's client; else
// A2A 0.3, over JSON-RPC to the card's url. The card is the remote agent's to write:
// the tool's declaration, which every model call sends, holds its name
// cut to 100 bytes and a description of at most 4000.
//
// The calling model passes "request", what to ask or tell the remote
// agent, and the tool's result is the remote agent's answer: its text, or
// its data (a typed agent's answer). Each conversation of ours
// (agent.Conversation of the call's context: package session and
// agentserver name it; for a run served by agentserver, of its user,
// agentserver.RunUser, so that two users' threads of one name are two
// conversations) is one conversation of the remote agent's (its
// contextId), so that a follow-up call goes on with what was said; calls
// of one conversation are sent one at a time, the later ones waiting for
// the earlier to end. Outside a conversation each call starts a new
// remote one.
//
// The progress the remote agent's calls report (the parts its working
// status carries, see Handler) is this call's progress
// (toolset.ReportProgress), named for the remote tool: a stream of the
// calling agent sees it as EventToolProgress.
//
// When the remote agent needs input before it can go on (A2A's
// input-required) the result says what it asks, and which of its calls
// wait for approval; the next call of the conversation answers it:
// "request" holds the answer, and "approve", true or false, decides the
// calls that wait (the remote agent's own approvals, as agents of this
// package and ADK ask for them).
//
// Every failure is an error result the model reads, naming the agent and
// what went wrong: it could not be reached, it refused the credentials or
// the request, its task failed or was rejected, it answered what A2A does
// not allow, or it did not answer before the call's context ended (the
// calling run was cancelled, or its ToolTimeout passed). A call that
// stops so cancels its remote task.
func RemoteTool(ctx context.Context, cardURL string, opts *RemoteOptions) (*toolset.Tool, error) {
	if opts == nil {
		opts = &RemoteOptions{}
	}
	if opts.MaxResponseBytes < 0 || opts.MaxConversations < 0 {
		return nil, errors.New("a2aagent: a negative limit in RemoteOptions")
	}
	maxBytes := opts.MaxResponseBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	maxConvs := opts.MaxConversations
	if maxConvs == 0 {
		maxConvs = DefaultMaxConversations
	}
	hc := limitedClient(opts.HTTPClient, maxBytes)
	card, v1card, err := resolveCard(ctx, hc, cardURL)
	if err != nil {
		return nil, err
	}
	var client remoteClient
	if v1card != nil {
		c, err := a2aclientv1.NewFromCard(ctx, v1card, a2aclientv1.WithDefaultsDisabled(),
			a2aclientv1.WithJSONRPCTransport(hc), a2aclientv1.WithRESTTransport(hc))
		if err != nil {
			return nil, fmt.Errorf("a2aagent: the agent at %s: %w", cardURL, err)
		}
		client = v1Remote{c}
	} else {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			return nil, fmt.Errorf("a2aagent: the agent at %s: %w", cardURL, err)
		}
		client = c
	}
	name := opts.Name
	if name == "" {
		name = toolName(card.Name)
	}
	ra := &remoteAgent{name: name, card: card, client: client, convs: newConversations(maxConvs), maxBytes: maxBytes}
	// The card is the remote agent's to write: its name goes into the
	// declaration every model call sends, so it is bounded.
	agentName := clip(card.Name, maxCardNameBytes)
	t, err := toolset.Define(toolset.Tool{
		Name:        name,
		Description: first(opts.Description, describe(card)),
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"request": {Type: "string", Description: "What to ask or tell " + agentName + ": the task in full (it does not see this conversation), or the answer to its question."},
				"approve": {Type: "boolean", Description: "Only when " + agentName + " waits for approval of calls it wants to make: true approves them, false refuses them (request then says why)."},
			},
			Required: []string{"request"},
		},
		Run: ra.call,
	})
	if err != nil {
		return nil, fmt.Errorf("a2aagent: the tool of the agent at %s: %w", cardURL, err)
	}
	return t, nil
}

// resolveCard fetches and checks the card at cardURL. It returns the
// card in 0.3's form, for its name, description and skills, and, when it
// lists an interface of A2A 1.0 over JSON-RPC or HTTP+JSON, in 1.0's,
// which the tool then speaks to; without one, the tool speaks 0.3 to the
// card's url.
func resolveCard(ctx context.Context, hc *http.Client, cardURL string) (*a2a.AgentCard, *a2av1.AgentCard, error) {
	u, err := url.Parse(cardURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("a2aagent: %q is not an http:// or https:// URL", cardURL)
	}
	var opts []agentcardv1.ResolveOption
	base := cardURL
	if strings.HasSuffix(u.Path, ".json") {
		opts = append(opts, agentcardv1.WithPath(u.Path))
		base = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}
	var raw []byte
	parse := a2av0.NewAgentCardParser() // either version's card, in 1.0's form
	resolver := &agentcardv1.Resolver{Client: hc, CardParser: func(b []byte) (*a2av1.AgentCard, error) {
		raw = b
		return parse(b)
	}}
	v1card, err := resolver.Resolve(ctx, base, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("a2aagent: the agent card at %s: %w", cardURL, err)
	}
	if v1card.Name == "" {
		return nil, nil, fmt.Errorf("a2aagent: the agent card at %s has no name", cardURL)
	}
	if slices.ContainsFunc(v1card.SupportedInterfaces, speaksV1) {
		card := &a2a.AgentCard{Name: v1card.Name, Description: v1card.Description}
		for _, sk := range v1card.Skills {
			card.Skills = append(card.Skills, a2a.AgentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags})
		}
		return card, v1card, nil
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil {
		return nil, nil, fmt.Errorf("a2aagent: the agent card at %s: %w", cardURL, err)
	}
	cu, err := url.Parse(card.URL)
	if err != nil || (cu.Scheme != "http" && cu.Scheme != "https") || cu.Host == "" {
		return nil, nil, fmt.Errorf("a2aagent: the agent card at %s has no http:// or https:// url (%q)", cardURL, card.URL)
	}
	return &card, nil, nil
}

// speaksV1 reports whether the tool speaks to i in A2A 1.0.
func speaksV1(i *a2av1.AgentInterface) bool {
	return i.ProtocolVersion == ProtocolVersion && (i.ProtocolBinding == a2av1.TransportProtocolJSONRPC || i.ProtocolBinding == a2av1.TransportProtocolHTTPJSON)
}

// remoteClient is what a RemoteTool asks of its client: a2a-go's, for an
// agent of A2A 0.3, or v1Remote.
type remoteClient interface {
	SendStreamingMessage(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error]
	CancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error)
}

// v1Remote speaks A2A 1.0 through a2a-go/v2's client, in 0.3's types
// (a2av0's converters): the rest of the tool is the same for both.
type v1Remote struct{ c *a2aclientv1.Client }

func (r v1Remote) SendStreamingMessage(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		m, err := a2av0.ToV1Message(p.Message)
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range r.c.SendStreamingMessage(ctx, &a2av1.SendMessageRequest{Message: m}) {
			if err != nil {
				yield(nil, legacyError(err))
				return
			}
			lev, err := a2av0.FromV1Event(ev)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(lev, nil) {
				return
			}
		}
	}
}

func (r v1Remote) CancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	t, err := r.c.CancelTask(ctx, &a2av1.CancelTaskRequest{ID: a2av1.TaskID(p.ID)})
	if err != nil {
		return nil, legacyError(err)
	}
	return a2av0.FromV1Task(t), nil
}

// legacyErrors pair 1.0's errors with 0.3's.
var legacyErrors = [][2]error{
	{a2av1.ErrParseError, a2a.ErrParseError}, {a2av1.ErrInvalidRequest, a2a.ErrInvalidRequest},
	{a2av1.ErrMethodNotFound, a2a.ErrMethodNotFound}, {a2av1.ErrInvalidParams, a2a.ErrInvalidParams},
	{a2av1.ErrInternalError, a2a.ErrInternalError}, {a2av1.ErrServerError, a2a.ErrServerError},
	{a2av1.ErrTaskNotFound, a2a.ErrTaskNotFound}, {a2av1.ErrTaskNotCancelable, a2a.ErrTaskNotCancelable},
	{a2av1.ErrUnsupportedOperation, a2a.ErrUnsupportedOperation}, {a2av1.ErrUnsupportedContentType, a2a.ErrUnsupportedContentType},
	{a2av1.ErrInvalidAgentResponse, a2a.ErrInvalidAgentResponse},
}

// legacyError returns err, an error of a2a-go/v2's client, as the 0.3
// error of its kind, its message and details kept.
func legacyError(err error) error {
	for _, p := range legacyErrors {
		if errors.Is(err, p[0]) {
			le := a2a.NewError(p[1], err.Error())
			var ae *a2av1.Error
			if errors.As(err, &ae) {
				le.Details = ae.Details
			}
			return le
		}
	}
	return err
}

var notToolChars = regexp.MustCompile(`[^a-z0-9_.:-]+`)

// toolName makes a tool name of an agent's name: lower case, each run of
// other characters an underscore, starting with a letter, at most 64
// bytes.
func toolName(s string) string {
	n := strings.Trim(notToolChars.ReplaceAllString(strings.ToLower(s), "_"), "_.:-")
	if n == "" || !(n[0] >= 'a' && n[0] <= 'z') {
		n = "agent_" + n
	}
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "_.:-")
	}
	return n
}

// maxCardNameBytes and maxDescriptionBytes bound what of a card the tool's
// declaration holds.
const (
	maxCardNameBytes    = 100
	maxDescriptionBytes = 4000
)

// describe is the tool's description: the card's, then its skills, within
// maxDescriptionBytes.
func describe(card *a2a.AgentCard) string {
	var b strings.Builder
	b.WriteString("Asks " + clip(card.Name, maxCardNameBytes) + ", a remote agent: " + clip(strings.TrimSpace(card.Description), maxDescriptionBytes))
	for _, s := range card.Skills {
		if b.Len() >= maxDescriptionBytes {
			break
		}
		if s.Name == "" || s.Name == card.Name && s.Description == card.Description {
			continue
		}
		b.WriteString("\n- " + clip(s.Name, maxCardNameBytes))
		if s.Description != "" {
			b.WriteString(": " + clip(s.Description, maxDescriptionBytes))
		}
	}
	return clip(b.String(), maxDescriptionBytes)
}

// clip cuts s to at most n bytes of valid UTF-8.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// conversationKey names the calling run's conversation, the user's own:
// the zero key when it names none.
func conversationKey(ctx context.Context) convKey {
	c := agent.Conversation(ctx)
	if c == "" {
		return convKey{}
	}
	return convKey{user: agentserver.RunUser(ctx), conversation: c}
}

// call is the tool's Run.
func (ra *remoteAgent) call(ctx context.Context, args map[string]any) (any, error) {
	request, _ := args["request"].(string)
	approve, hasApprove := args["approve"].(bool)
	conv, err := ra.convs.acquire(ctx, conversationKey(ctx))
	if err != nil {
		return nil, ra.stopped(ctx)
	}
	defer ra.convs.release(conv)

	msg := a2a.NewMessage(a2a.MessageRoleUser)
	msg.ContextID = conv.contextID
	if w := conv.waiting; w != nil {
		msg.TaskID = w.task
		for _, c := range w.calls {
			if c.confirmation {
				if !hasApprove {
					return nil, fmt.Errorf("%s waits for approval of %s: call it again with approve true or false", ra.name, w.callList())
				}
				msg.Parts = append(msg.Parts, a2a.DataPart{
					Data:     map[string]any{"id": c.id, "name": c.name, "response": map[string]any{"confirmed": approve}},
					Metadata: map[string]any{metaType: typeFunctionResponse},
				})
				continue
			}
			msg.Parts = append(msg.Parts, a2a.DataPart{
				Data:     map[string]any{"id": c.id, "name": c.name, "response": map[string]any{"result": request}},
				Metadata: map[string]any{metaType: typeFunctionResponse},
			})
		}
	}
	if request != "" || len(msg.Parts) == 0 {
		msg.Parts = append(msg.Parts, a2a.TextPart{Text: request})
	}

	info := &callInfo{}
	rctx := context.WithValue(ctx, callInfoKey{}, info)
	var out outcome
	var streamErr error
	for ev, err := range ra.client.SendStreamingMessage(rctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			streamErr = err
			break
		}
		if err := out.add(ev); err != nil {
			streamErr = err
			break
		}
		relayProgress(ctx, ev)
		if out.final {
			break
		}
	}
	if out.contextID != "" {
		conv.contextID = out.contextID
	}
	if ctx.Err() != nil {
		ra.cancelRemote(ctx, out.taskID)
		return nil, ra.stopped(ctx)
	}
	if streamErr != nil {
		if msg.TaskID != "" && isA2AError(streamErr) {
			conv.waiting = nil // the agent refused the task: the next call starts another
		}
		return nil, ra.failed(streamErr, info)
	}
	if !out.final {
		return nil, fmt.Errorf("%s: its answer ended before its task did (the connection was cut, or the agent stopped): the task's fate is unknown", ra.name)
	}
	return ra.result(conv, &out)
}

// result turns the end of a call into the tool's result, and remembers
// what the conversation's next call needs.
func (ra *remoteAgent) result(conv *conversation, out *outcome) (any, error) {
	conv.waiting = nil
	switch out.state {
	case a2a.TaskStateCompleted:
		if data, ok := out.data(); ok {
			return data, nil
		}
		return out.text(), nil
	case a2a.TaskStateInputRequired:
		w := out.waiting()
		conv.waiting = w
		res := &inputRequired{State: "input-required", Question: out.statusText(),
			Next: "To answer, call " + ra.name + " again: request holds the answer."}
		for _, c := range w.calls {
			res.WaitingFor = append(res.WaitingFor, waitingFor{Call: c.call, Args: c.args, NeedsApproval: c.confirmation})
		}
		if w.confirmations() > 0 {
			res.Next += " approve: true runs the calls that need approval, false refuses them."
		}
		return res, nil
	case a2a.TaskStateAuthRequired:
		return nil, fmt.Errorf("%s needs authentication it was not given: %s", ra.name, first(out.statusText(), "it said no more"))
	case a2a.TaskStateRejected:
		return nil, fmt.Errorf("%s rejected the request: %s", ra.name, first(out.statusText(), "it gave no reason"))
	case a2a.TaskStateCanceled:
		return nil, fmt.Errorf("%s cancelled the task: %s", ra.name, first(out.statusText(), "it gave no reason"))
	case a2a.TaskStateFailed:
		return nil, fmt.Errorf("%s failed: %s", ra.name, first(out.statusText(), "it gave no reason"))
	}
	return nil, fmt.Errorf("%s ended its answer in the state %q, which A2A does not end a task in", ra.name, out.state)
}

// inputRequired is the result of a call the remote agent answered with a
// question: what the model reads.
type inputRequired struct {
	State      string       `json:"state"`
	Question   string       `json:"question"`
	WaitingFor []waitingFor `json:"waiting_for,omitempty"`
	Next       string       `json:"next"`
}

type waitingFor struct {
	Call          string `json:"call"`
	Args          any    `json:"args"`
	NeedsApproval bool   `json:"needs_approval"`
}

// stopped is the error of a call whose context ended.
func (ra *remoteAgent) stopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not answer in time (the call's time limit passed); its task was cancelled: %w", ra.name, ctx.Err())
	}
	return fmt.Errorf("the call of %s was cancelled: %w", ra.name, ctx.Err())
}

// failed is the error of a call the remote agent did not answer as A2A
// says.
func (ra *remoteAgent) failed(err error, info *callInfo) error {
	var tooLarge *errTooLarge
	switch {
	case errors.As(err, &tooLarge) || info.tooLarge:
		// (A reader may fail on the cut answer before it sees the limit.)
		return fmt.Errorf("%s answered with more than %d bytes", ra.name, ra.maxBytes)
	case info.status == http.StatusUnauthorized || info.status == http.StatusForbidden:
		return fmt.Errorf("%s refused our credentials (HTTP %d): %w", ra.name, info.status, err)
	case info.status != 0 && info.status != http.StatusOK:
		return fmt.Errorf("%s refused the request (HTTP %d): %w", ra.name, info.status, err)
	case !info.answered:
		return fmt.Errorf("%s could not be reached: %w", ra.name, err)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%s: the connection was cut before its answer ended: %w", ra.name, err)
	case isA2AError(err):
		return fmt.Errorf("%s refused the request: %w", ra.name, withDetail(err))
	}
	return fmt.Errorf("%s answered with a malformed response: %w", ra.name, err)
}

// isA2AError reports whether err is an error the remote agent answered
// with, as opposed to one reading its answer.
// withDetail returns err, an A2A error, with the text of its data.error
// when that says more than its message: a2a-go's client keeps the
// message ("invalid params", as some agents send it) and puts the data in
// the error's details, where servers (a2a-go's v0.3 servers, and ours)
// write what is wrong.
func withDetail(err error) error {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		if d, ok := ae.Details["error"].(string); ok && d != "" && d != ae.Message {
			return fmt.Errorf("%w: %s", err, d)
		}
	}
	return err
}

func isA2AError(err error) bool {
	for _, e := range []error{a2a.ErrParseError, a2a.ErrInvalidRequest, a2a.ErrMethodNotFound, a2a.ErrInvalidParams,
		a2a.ErrInternalError, a2a.ErrServerError, a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable,
		a2a.ErrUnsupportedOperation, a2a.ErrUnsupportedContentType, a2a.ErrInvalidAgentResponse} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// cancelRemote cancels the remote task of a call that was stopped, if it
// had one, for a short while at most.
func (ra *remoteAgent) cancelRemote(ctx context.Context, task a2a.TaskID) {
	if task == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	ra.client.CancelTask(cctx, &a2a.TaskIDParams{ID: task})
}

// relayProgress reports, as the calling tool's progress, the progress of
// a call of the remote agent that a status update of its working task
// carries (see Handler): the remote call's done and total, and its tool's
// name before its message ("count_primes: checked 400").
func relayProgress(ctx context.Context, ev a2a.Event) {
	su, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.Status.State != a2a.TaskStateWorking || su.Status.Message == nil {
		return
	}
	for _, p := range su.Status.Message.Parts {
		dp, ok := p.(a2a.DataPart)
		if !ok {
			continue
		}
		if marked, _ := dp.Metadata[metaProgress].(bool); !marked {
			continue
		}
		done, ok := dp.Data["done"].(float64)
		if !ok {
			continue
		}
		total, _ := dp.Data["total"].(float64)
		name, _ := dp.Data["name"].(string)
		message, _ := dp.Data["message"].(string)
		text := name
		if message != "" && name != "" {
			text += ": " + message
		} else if message != "" {
			text = message
		}
		toolset.ReportProgress(ctx, done, total, text)
	}
}
