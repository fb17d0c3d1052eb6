package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A UserFunc names the user a run serves, from its context: for an agent
// served by package agentserver, agentserver.RunUser. An empty name means
// none: the run remembers nothing and finds nothing.
type UserFunc func(ctx context.Context) string

// DefaultToolName names the tool [Service.Tool] makes.
const DefaultToolName = "search_memory"

// ToolOptions configure [Service.Tool].
type ToolOptions struct {
	// User names the user whose memories the tool searches. Required.
	User UserFunc

	// Name and Description are the tool's. Empty means DefaultToolName and
	// a description that tells the model what the tool finds.
	Name, Description string

	// Limit is how many memories a call returns at most. Zero means 5.
	Limit int
}

// toolInput is what the model passes the search tool.
type toolInput struct {
	Query string `json:"query" jsonschema:"what to look for: the words, names and dates the memory would hold"`
}

// ToolMemory is a memory as the search tool returns it to the model.
type ToolMemory struct {
	Text   string `json:"text"`
	Author string `json:"author,omitempty"`
	Date   string `json:"date"`
	Kind   Kind   `json:"kind"`
}

// Tool returns a tool the model calls to search the memories of the run's
// user (on demand, as ADK's load_memory): it takes a query and answers the
// best memories, each with who said it and when, leaving out those of the
// run's own conversation (agent.Conversation), which the model has
// already. A run without a user, or a query over the service's limit, is
// answered with an error the model reads. The tool is read-only.
func (s *Service) Tool(opts ToolOptions) (*toolset.Tool, error) {
	if opts.User == nil {
		return nil, errors.New("memory: ToolOptions.User is nil")
	}
	name, desc := opts.Name, opts.Description
	if name == "" {
		name = DefaultToolName
	}
	if desc == "" {
		desc = "Searches what the user said in earlier conversations, and the facts remembered about them " +
			"(preferences, plans, people, places, dates). Use it when the answer may depend on something the user " +
			"told before. Returns the most relevant memories first, each with its author and date."
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 5
	}
	t, err := toolset.Func(name, desc, func(ctx context.Context, in toolInput) ([]ToolMemory, error) {
		user := opts.User(ctx)
		if user == "" {
			return nil, errors.New("this run serves no known user: there are no memories to search")
		}
		res, err := s.Search(ctx, user, in.Query, &SearchOptions{Limit: limit, ExcludeThread: agent.Conversation(ctx)})
		if err != nil {
			return nil, err
		}
		out := make([]ToolMemory, len(res))
		for i, r := range res {
			out[i] = ToolMemory{Text: r.Text, Author: r.Author, Date: r.Time.Format("2 January 2006"), Kind: r.Kind}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	t.ReadOnly = true
	return t, nil
}

// MemoriesPrefix begins the text of the content [Preload] adds to a
// run's contents, so that the model, and a reader of the requests, can
// tell it from what the user wrote.
const MemoriesPrefix = "[Memories of earlier conversations with this user, the most relevant first. Use them " +
	"where they help; they may be out of date.]\n"

// Defaults of Preload.
const (
	DefaultPreloadTokens   = 1000
	DefaultPreloadMemories = 10
)

// Preload adds the memories most relevant to a run's new message to what
// the model reads (as ADK's preload_memory does): before the run's first
// model call, it searches the user's memories with the text of the last
// user content, and puts those that fit a token budget in a user content
// of their own, beginning with [MemoriesPrefix], just before that
// content. Each memory is one line, with its date and author. Memories of
// the run's own conversation (agent.Conversation) are left out: the
// history holds them. Its Prepare method is an [agent.HistoryFunc]:
//
//	pre := &memory.Preload{Service: svc, User: agentserver.RunUser}
//	a, err := agent.New(agent.Config{…, PrepareHistory: pre.Prepare})
//
// The content is part of what the run sends, not of its history: the
// stored conversation (Result.History) never holds it. A search that
// fails (an outage of the store) is reported by the service's Observer and
// Logger, and the run goes on without memories: Preload never fails a
// run. The search's event reaches the Observer with the run's context, so
// that package devui shows, for each run, the memories it was given.
type Preload struct {
	Service *Service // required
	User    UserFunc // required

	// MaxTokens bounds the content's size, estimated at 4 bytes a token.
	// Zero means DefaultPreloadTokens (1000).
	MaxTokens int

	// MaxMemories bounds the memories added. Zero means
	// DefaultPreloadMemories (10).
	MaxMemories int

	// Next, when set, prepares the contents after the memories are added:
	// a history.Trimmer's or Summarizer's Prepare, for one.
	Next agent.HistoryFunc
}

// Prepare implements [agent.HistoryFunc].
func (p *Preload) Prepare(ctx context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
	contents := h.Contents
	if h.Turn == 0 {
		contents = p.add(ctx, contents)
	}
	if p.Next != nil {
		next := *h
		next.Contents = contents
		return p.Next(ctx, &next)
	}
	return contents, nil
}

// add returns contents with the memories for its last user message, or
// contents itself when there are none.
func (p *Preload) add(ctx context.Context, contents []*genai.Content) []*genai.Content {
	if p.Service == nil || p.User == nil {
		return contents
	}
	user := p.User(ctx)
	last := -1
	for i := len(contents) - 1; i >= 0; i-- {
		if contentText(contents[i]) != "" && contents[i].Role == genai.RoleUser {
			last = i
			break
		}
	}
	if user == "" || last < 0 {
		return contents
	}
	query := cut(contentText(contents[last]), p.Service.cfg.MaxQueryBytes)
	n := p.MaxMemories
	if n <= 0 {
		n = DefaultPreloadMemories
	}
	res, err := p.Service.Search(ctx, user, query, &SearchOptions{Limit: n, ExcludeThread: agent.Conversation(ctx)})
	if err != nil {
		// The Observer saw the search fail; the run goes on without memories.
		p.Service.logger.WarnContext(ctx, "memory: Preload's search failed: the run goes on without memories", "user", user, "error", err)
		return contents
	}
	if len(res) == 0 {
		return contents
	}
	text := Block(res, p.MaxTokens)
	if text == "" {
		return contents
	}
	mem := genai.NewContentFromText(text, genai.RoleUser)
	return slices.Concat(contents[:last:last], []*genai.Content{mem}, contents[last:])
}

// Block returns the text Preload sends for res: MemoriesPrefix, then a
// line per memory, in order, as many as fit maxTokens (estimated at 4
// bytes a token; zero means DefaultPreloadTokens); "" when none fits.
func Block(res []Result, maxTokens int) string {
	if maxTokens <= 0 {
		maxTokens = DefaultPreloadTokens
	}
	var b strings.Builder
	b.WriteString(MemoriesPrefix)
	n := 0
	for _, r := range res {
		line := fmt.Sprintf("- %s", r.Time.Format("2 January 2006"))
		if r.Author != "" {
			line += ", " + r.Author
		}
		line += ": " + strings.Join(strings.Fields(r.Text), " ") + "\n"
		if (b.Len()+len(line)+3)/4 > maxTokens {
			break
		}
		b.WriteString(line)
		n++
	}
	if n == 0 {
		return ""
	}
	return b.String()
}

// RememberRun remembers the messages a served run added to a thread: it is
// agentserver.Config.Remember's function, and calls IngestThread with
// contents[from:]. It returns at once once they are stored (with an
// Embedder and Extraction, their embedding and extraction go on in the
// background); a failure is reported to the Observer and the Logger, and
// never fails the run.
func (s *Service) RememberRun(ctx context.Context, user, thread string, contents []*genai.Content, from int) {
	if user == "" || thread == "" {
		return
	}
	if _, err := s.IngestThread(ctx, user, thread, contents, from); err != nil {
		s.logger.WarnContext(ctx, "memory: a run's messages could not be remembered", "user", user, "thread", thread, "error", err)
	}
}
