//lint:file-ignore SA1019 sampling is deprecated from 2026-07-28 (SEP-2577) but still served: Input asks for it in every revision

package mcptools

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrInputRequired is the error [Input] (and [Elicit], [Sample]) returns
// to a tool when the client of a stateless call has not answered yet: the
// tool returns (with any error), the call is answered with the questions
// it asked (an input_required result), and the client calls again with
// the answers, when the tool runs again from the start.
var ErrInputRequired = errors.New("mcptools: the call needs the client's input")

// ErrNoCapability is wrapped by the error [Input] returns when the client
// did not declare the capability the request needs (elicitation, sampling
// or roots): it cannot be asked.
var ErrNoCapability = errors.New("mcptools: the client does not offer this")

// ErrBadRequestState is wrapped by the error a stateless call is refused
// with when the requestState it echoes was not issued by this server (or
// by a server sharing its StateKey), was issued for another call, tool or
// user, or has expired.
var ErrBadRequestState = errors.New("mcptools: invalid requestState")

// DefaultStateTTL is how long the requestState of an input_required
// result stays valid, unless [HandlerOptions] say otherwise.
const DefaultStateTTL = 10 * time.Minute

// maxStateSize bounds a requestState: the answers a call carries from
// round to round.
const maxStateSize = 256 << 10

// Input asks the client of the call that ctx belongs to (a tool served by
// [NewServer], [ServeStdio] or [NewHTTPHandler]) for what req says, an
// *mcp.ElicitParams (ask its user), *mcp.CreateMessageParams (ask its
// model) or *mcp.ListRootsParams, under key, a name unique within the
// call, and returns the answer: an *mcp.ElicitResult, an
// *mcp.CreateMessageWithToolsResult or an *mcp.ListRootsResult.
//
// How it asks depends on the client's protocol revision. Up to
// 2025-11-25, the call has a session, and Input sends the request to the
// client and waits for its answer. From 2026-07-28 on, the call is
// stateless: Input returns the answer the client sent with the call under
// key, if any, and otherwise an error wrapping [ErrInputRequired]; the
// tool then returns, and the client is answered with every question the
// tool asked (an input_required result, with a requestState signed by
// the server that carries the answers of earlier rounds) and calls again
// with the answers. The tool runs again from the start, and Input
// returns each answer. So a tool that asks runs its steps before a
// question again, and should do nothing there that it cannot repeat; a
// tool that needs several answers at once asks for each before
// returning, so that the client is asked for all of them in one round.
//
// A client that did not declare the capability a request needs is not
// asked: the error wraps [ErrNoCapability]. Outside a served call (an
// agent running the tool directly), Input fails.
func Input(ctx context.Context, key string, req mcp.InputRequest) (mcp.InputResponse, error) {
	in, _ := ctx.Value(inputsKey{}).(*inputs)
	if in == nil {
		return nil, errors.New("mcptools: Input: not in a call served over MCP")
	}
	if key == "" {
		return nil, errors.New("mcptools: Input: the key is empty")
	}
	if err := capable(in.req.ClientCapabilities(), req); err != nil {
		return nil, err
	}
	if in.legacy {
		return askSession(ctx, in.req.Session, req)
	}
	return in.answer(key, req)
}

// Elicit asks the client's user, through [Input], and returns their
// answer.
func Elicit(ctx context.Context, key string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	res, err := Input(ctx, key, p)
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.ElicitResult)
	if !ok {
		return nil, fmt.Errorf("mcptools: the client answered the elicitation %q with a %T", key, res)
	}
	return r, nil
}

// Sample asks the client's model, through [Input], and returns its
// answer.
func Sample(ctx context.Context, key string, p *mcp.CreateMessageParams) (*mcp.CreateMessageWithToolsResult, error) {
	res, err := Input(ctx, key, p)
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return nil, fmt.Errorf("mcptools: the client answered the sampling request %q with a %T", key, res)
	}
	return r, nil
}

// capable checks that a client with caps can be asked req.
func capable(caps *mcp.ClientCapabilities, req mcp.InputRequest) error {
	var what string
	ok := caps != nil
	switch req.(type) {
	case *mcp.ElicitParams:
		what, ok = "elicitation", ok && caps.Elicitation != nil
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		what, ok = "sampling", ok && caps.Sampling != nil
	case *mcp.ListRootsParams:
		what, ok = "roots", ok && (caps.RootsV2 != nil || caps.Roots.ListChanged)
	default:
		return fmt.Errorf("mcptools: Input: %T is not an input request", req)
	}
	if !ok {
		return fmt.Errorf("%w: it did not declare %s", ErrNoCapability, what)
	}
	return nil
}

// askSession sends req to the client of a session and waits for its
// answer: the protocol up to 2025-11-25.
func askSession(ctx context.Context, ss *mcp.ServerSession, req mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := req.(type) {
	case *mcp.ElicitParams:
		return ss.Elicit(ctx, p)
	case *mcp.CreateMessageParams:
		return ss.CreateMessageWithTools(ctx, withTools(p))
	case *mcp.CreateMessageWithToolsParams:
		return ss.CreateMessageWithTools(ctx, p)
	case *mcp.ListRootsParams:
		return ss.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("mcptools: Input: %T is not an input request", req)
}

// withTools is p in the form that carries several contents per message.
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	var msgs []*mcp.SamplingMessageV2
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
	}
	return &mcp.CreateMessageWithToolsParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens,
		Messages: msgs, Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
}

type inputsKey struct{}

// inputs is what a call's tool asks of the client and what it was
// answered.
type inputs struct {
	req    *mcp.CallToolRequest
	legacy bool // a session: ask at once

	mu      sync.Mutex
	answers map[string]json.RawMessage // this round's and earlier rounds'
	used    map[string]json.RawMessage // the answers the tool read, carried to the next round
	asked   mcp.InputRequestMap
}

func (in *inputs) answer(key string, req mcp.InputRequest) (mcp.InputResponse, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if raw, ok := in.answers[key]; ok {
		var m mcp.InputResponseMap
		if err := m.UnmarshalJSON(fmt.Appendf(nil, `{"a":%s}`, raw)); err == nil {
			in.used[key] = raw
			return m["a"], nil
		}
		// An answer of the wrong form is asked again.
	}
	if in.asked == nil {
		in.asked = mcp.InputRequestMap{}
	}
	in.asked[key] = req
	return nil, fmt.Errorf("%w: %s", ErrInputRequired, key)
}

// stateKeeper signs and checks the requestState of a server's stateless
// calls.
type stateKeeper struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newStateKeeper(key []byte, ttl time.Duration) *stateKeeper {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	return &stateKeeper{key: slices.Clone(key), ttl: ttl, now: time.Now}
}

// requestState is what a requestState carries, signed.
type requestState struct {
	Tool    string                     `json:"t"`
	Args    []byte                     `json:"a"` // SHA-256 of the arguments
	User    string                     `json:"u,omitempty"`
	Expires int64                      `json:"e"` // Unix seconds
	Answers map[string]json.RawMessage `json:"r,omitempty"`
}

// seal returns the requestState that carries answers to the next round of
// the call of tool with args by user.
func (k *stateKeeper) seal(tool string, args []byte, user string, answers map[string]json.RawMessage) (string, error) {
	sum := sha256.Sum256(args)
	b, err := json.Marshal(requestState{Tool: tool, Args: sum[:], User: user, Expires: k.now().Add(k.ttl).Unix(), Answers: answers})
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, k.key)
	mac.Write(b)
	state := base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	if len(state) > maxStateSize {
		return "", fmt.Errorf("mcptools: the answers the call carries are over %d bytes", maxStateSize)
	}
	return state, nil
}

// open checks state, echoed by a call of tool with args by user, and
// returns the answers it carries. An empty state carries none.
func (k *stateKeeper) open(state, tool string, args []byte, user string) (map[string]json.RawMessage, error) {
	if state == "" {
		return nil, nil
	}
	if len(state) > maxStateSize {
		return nil, fmt.Errorf("%w: too long", ErrBadRequestState)
	}
	body, sig, ok := bytes.Cut([]byte(state), []byte("."))
	b, err1 := base64.RawURLEncoding.DecodeString(string(body))
	s, err2 := base64.RawURLEncoding.DecodeString(string(sig))
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: malformed", ErrBadRequestState)
	}
	mac := hmac.New(sha256.New, k.key)
	mac.Write(b)
	if !hmac.Equal(mac.Sum(nil), s) {
		return nil, fmt.Errorf("%w: its signature does not match", ErrBadRequestState)
	}
	var rs requestState
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequestState, err)
	}
	sum := sha256.Sum256(args)
	switch {
	case rs.Tool != tool || !bytes.Equal(rs.Args, sum[:]):
		return nil, fmt.Errorf("%w: it was issued for another call", ErrBadRequestState)
	case rs.User != user:
		return nil, fmt.Errorf("%w: it was issued to another user", ErrBadRequestState)
	case k.now().Unix() > rs.Expires:
		return nil, fmt.Errorf("%w: it has expired; call again without it", ErrBadRequestState)
	}
	return rs.Answers, nil
}

// invalidState is the JSON-RPC error of a call whose requestState is
// refused.
func invalidState(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}
