package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// defaultModel is the model used with an API key, unless -model says
// otherwise.
const defaultModel = "gemini-3.5-flash" // a current, stable Flash model

const systemPrompt = "You are a helpful assistant in a terminal chat. Use the tools when they help: " +
	"get_weather (its data is made up: say so), current_time, calculate and count_primes. Answer briefly."

// options configure a chat session.
type options struct {
	model       string
	verbose     bool
	approve     bool      // ask before each tool call runs
	search      bool      // -search: Google Search, a built-in tool, beside the tools
	trace       bool      // trace each answer (see tracing)
	traceOut    io.Writer // where -trace prints span trees; nil means stderr
	apiKey      string    // empty: the offline model
	vertex      bool      // GOOGLE_GENAI_USE_VERTEXAI: Vertex AI, configured by genai from the environment
	interactive bool      // the input is a terminal: show a prompt
	session     string    // -session: the conversation's name, kept in a file
	web         string    // -web: serve the dev UI at this address instead of chatting in the terminal
	sessionDB   string    // -session-db: the file
	color       bool      // the output is a terminal: dim tool lines
	live        bool      // the output is a terminal that moves its cursor: live progress bars
	interrupts  <-chan os.Signal

	// term, when set, is the terminal the chat reads its input from
	// through a line editor, and shows its banner on; raw, when set, puts
	// it in raw mode while a line is read, and returns what restores it.
	// live also shows a spinner while the model thinks.
	term io.ReadWriter
	raw  func() (restore func(), err error)
	// width, when set, is the output's width in columns; nil means
	// defaultWidth. resizes, when set, says the terminal was resized: a
	// line being typed is redrawn at the new width.
	width   func() int
	resizes <-chan os.Signal

	// mcp and mcpHTTP are the -mcp and -mcp-http values: MCP servers
	// whose tools are added.
	mcp, mcpHTTP []string
	// a2a are the -a2a values: remote A2A agents, each a tool.
	a2a []string
	// openAPI are the -openapi values: OpenAPI descriptions whose
	// operations are tools; openAPIAuth the -openapi-auth credentials
	// (scheme=secret), openAPIBase the -openapi-base URL of their calls.
	openAPI, openAPIAuth []string
	openAPIBase          string
	// loginFile, when set, replaces the file in the user's config
	// directory that keeps the logins to -mcp-http servers; loginOut,
	// where the user is told to log in (nil: stderr); loginTimeout, how
	// long they have (0: mcptools.DefaultLoginTimeout); browser, the
	// system's browser (tests play the user with it).
	loginFile    string
	loginOut     io.Writer
	loginTimeout time.Duration
	browser      func(url string) error

	// api is -api: "generatecontent" (or empty) or "interactions".
	api string
	// liveAPI is -live: the chat talks over Gemini's Live API.
	liveAPI bool

	// models, when set, replaces both the real API and the offline model
	// (tests script the fake with it).
	models agent.Models
	// httpClient, when set, is the Vertex AI client's HTTP client (tests
	// point it at the fake; nil uses Google credentials).
	httpClient *http.Client
	// clock, when set, is the current_time tool's clock.
	clock func() time.Time
	// trimAt, when set, replaces maxPromptTokens (tests trim early).
	trimAt int
}

// run is the whole chat: it reads messages from in until it ends, /exit,
// or an interrupt at the prompt, and writes the conversation to out.
func run(ctx context.Context, opts options, in io.Reader, out io.Writer) error {
	ctx, exit := context.WithCancel(ctx)
	defer exit()

	native := demotools.Set()
	if opts.clock != nil {
		native = demotools.New(opts.clock)
	}
	var tr *tracing // nil: no tracing
	if opts.trace {
		w := opts.traceOut
		if w == nil {
			w = os.Stderr
		}
		var err error
		if tr, err = startTracing(ctx, w); err != nil {
			return err
		}
		defer tr.shutdown()
	}

	models, model := opts.models, opts.model
	if model == "" || opts.liveAPI && model == defaultModel {
		model = defaultModel
		if opts.liveAPI {
			model = defaultLiveModel
		}
	}
	if opts.liveAPI && (opts.web != "" || opts.session != "" || strings.ToLower(opts.api) == apiInteractions) {
		return errors.New("-live goes with none of -web, -session and -api interactions")
	}
	var client, liveClient *genai.Client // liveClient: the Live API's, when not client
	switch {
	case models != nil:
	case opts.vertex:
		// genai reads GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, and
		// finds Application Default Credentials.
		// With -trace, its HTTP requests are not traced: wrapping the
		// client would bypass the credentials genai adds to its own.
		var err error
		client, err = genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendVertexAI, HTTPClient: opts.httpClient})
		if err != nil {
			return fmt.Errorf("connecting to Vertex AI: %w", err)
		}
		models = client.Models
	case opts.apiKey != "":
		var err error
		client, err = genai.NewClient(ctx, &genai.ClientConfig{APIKey: opts.apiKey, Backend: genai.BackendGeminiAPI, HTTPClient: tr.httpClient(nil)})
		if err != nil {
			return fmt.Errorf("connecting to Gemini: %w", err)
		}
		models = client.Models
	default:
		srv := offline.NewServer(offlineTrip, offlineSearch) // the /trip planner and -search answer their own requests
		defer srv.Close()
		cc := srv.ClientConfig()
		cc.HTTPClient = tr.httpClient(cc.HTTPClient)
		var err error
		if client, err = genai.NewClient(ctx, cc); err != nil {
			return err
		}
		models, model = client.Models, offline.ModelName
		if opts.liveAPI || opts.web != "" {
			// The fake's Live API is dialled as ws://; its client serves
			// client.Live only (-web: the page's voice sessions).
			if liveClient, err = genai.NewClient(ctx, srv.LiveClientConfig()); err != nil {
				return err
			}
		}
		if opts.liveAPI {
			model = offline.LiveModelName
		}
		if opts.web != "" {
			fmt.Fprintln(out, "No GEMINI_API_KEY set: running on the built-in offline model.")
		}
	}

	switch strings.ToLower(opts.api) {
	case "", apiGenerateContent:
	case apiInteractions:
		if client != nil {
			// The same client, the same credentials; the Interactions API
			// keeps the conversation, so each turn sends only what it lacks.
			models = geminiinteractions.New(client, geminiinteractions.Config{})
		}
	default:
		return fmt.Errorf("-api %q: want %s or %s", opts.api, apiGenerateContent, apiInteractions)
	}

	asker := &elicitor{}
	tools, sources, closeMCP, err := withMCP(ctx, opts, native, out, asker.handle)
	if err != nil {
		return err
	}
	defer closeMCP()
	if tools, err = withA2A(ctx, opts.a2a, tools, sources, out); err != nil {
		return err
	}
	tools, apis, err := withOpenAPI(ctx, opts, tools, sources, out)
	if err != nil {
		return err
	}

	prompt := systemPrompt
	if opts.web != "" {
		prompt = strings.Replace(prompt, "a terminal chat", "a chat in the browser", 1)
	}
	cfg := agent.Config{
		Models: models,
		Model:  model,
		Name:   "chat",
		Tools:  tools,
		GenerateConfig: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(prompt, genai.RoleUser),
		},
		ToolTimeout:    30 * time.Second,
		PrepareHistory: history.Trimmer{MaxTokens: cmp.Or(opts.trimAt, maxPromptTokens)}.Prepare,
		Observer:       tr.observer(client, models),
	}
	switch {
	case opts.approve:
		cfg.NeedsApproval = func(*genai.FunctionCall) bool { return true }
	case len(apis) > 0:
		cfg.NeedsApproval = needsApproval(apis)
	}
	if opts.search {
		cfg.BuiltinTools = []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}
	}
	if opts.vertex {
		cfg.Backend = genai.BackendVertexAI
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	convs, err := openConversations(ctx, opts)
	if err != nil {
		return fmt.Errorf("opening the conversations: %w", err)
	}
	defer convs.Close()
	if opts.web != "" {
		// The page's voice sessions: the same tools and approvals on a
		// Live model (the offline model's, or Gemini's with a key).
		vcfg := cfg
		vcfg.PrepareHistory = nil // a live session keeps its own context
		vcfg.BuiltinTools = nil
		if liveClient != nil {
			vcfg.Models, vcfg.Model = liveClient.Models, offline.LiveModelName
		} else {
			vcfg.Model = webLiveModel
		}
		var voice *agent.Agent
		if client != nil || liveClient != nil {
			if voice, err = agent.New(vcfg); err != nil {
				return err
			}
		}
		return serveWeb(ctx, opts, a, voice, cmp.Or(liveClient, client), convs, out)
	}
	if opts.term != nil {
		opts.interactive = true
	}
	c := &chat{agent: a, models: models, tools: tools, sources: sources, out: out, opts: opts, st: newStyle(opts.color), model: model, convs: convs, tracing: tr}
	if opts.liveAPI {
		if liveClient == nil {
			liveClient = client
		}
		if liveClient == nil {
			return errors.New("-live talks to Gemini or the offline model, not to the models given")
		}
		if c.live, err = startLive(ctx, liveClient, a); err != nil {
			return err
		}
		defer c.live.close()
	}
	asker.set(c)
	return c.loop(ctx, exit, in)
}

// The APIs -api chooses between.
const (
	apiGenerateContent = "generatecontent"
	apiInteractions    = "interactions"
)

// maxPromptTokens is the prompt size past which the chat trims what it
// sends: old tool outputs first, then the oldest exchanges. Gemini takes a
// million tokens; this keeps long chats affordable.
const maxPromptTokens = 200_000

// chat is one session: the agent, the conversation so far, and where it
// is written.
type chat struct {
	agent   *agent.Agent
	models  agent.Models
	tools   *toolset.Set
	sources map[string]string // where each tool comes from
	out     io.Writer
	opts    options
	st      style
	model   string
	convs   *conversations
	tracing *tracing  // nil without -trace
	live    *liveChat // -live: the live session the messages go to; nil otherwise

	// The input, read a line at a time by a goroutine of the loop's: a
	// prompt on asks reads a line, which comes on lines; reading tells
	// that a line is being read.
	asks    chan<- string
	lines   <-chan lineRead
	reading bool
	// inputMu makes one reader of the input at a time: the loop, an
	// approval, and an MCP server's question (asked on the goroutine of
	// the tool call that waits for it).
	inputMu sync.Mutex

	mu      sync.Mutex
	current context.CancelFunc // cancels the answer in progress, if any
}

// lineRead is a line of input read, or why none was.
type lineRead struct {
	line string
	err  error
}

func (c *chat) loop(ctx context.Context, exit context.CancelFunc, in io.Reader) error {
	var r lineReader
	if c.opts.term != nil {
		ed := newEditor(c.opts.term, c.opts.raw, c.opts.width, c.opts.resizes)
		defer ed.close() // the terminal is never left raw
		r = ed
		fmt.Fprintln(c.out, c.banner())
	} else {
		var prompts io.Writer
		if c.opts.interactive {
			prompts = c.out
		}
		r = newPlainReader(in, prompts)
	}
	if c.opts.interactive && c.convs.path != "" {
		fmt.Fprintln(c.out, c.st.dim(fmt.Sprintf("(conversation %q, kept in %s)", c.convs.name, c.convs.path)))
	}
	go c.watchInterrupts(ctx, exit)

	asks, lines := make(chan string), make(chan lineRead, 1)
	c.asks, c.lines = asks, lines
	defer close(asks)
	go func() {
		for prompt := range asks {
			line, err := r.readLine(prompt)
			lines <- lineRead{line, err}
		}
	}()

	for {
		l, err := c.readLine(ctx, c.st.prompt("you> "))
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(c.out)
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("reading the input: %w", err)
		}
		line := strings.TrimSpace(l)
		switch {
		case line == "":
			continue
		case line == "/trip" || strings.HasPrefix(line, "/trip "):
			c.trip(ctx, strings.TrimSpace(strings.TrimPrefix(line, "/trip")))
		case strings.HasPrefix(line, "/"):
			if c.command(ctx, line) {
				return nil
			}
		case c.live != nil:
			c.askLive(ctx, line)
		default:
			c.ask(ctx, line)
		}
	}
}

// watchInterrupts turns Ctrl-C into: stop the answer in progress, or, at
// the prompt (or when an answer is already being stopped), leave.
func (c *chat) watchInterrupts(ctx context.Context, exit context.CancelFunc) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.opts.interrupts:
			c.mu.Lock()
			cancel := c.current
			c.current = nil
			c.mu.Unlock()
			if cancel == nil {
				exit()
				return
			}
			cancel()
		}
	}
}

// command runs a /command and reports whether the chat should end.
func (c *chat) command(ctx context.Context, line string) (quit bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	var err error
	switch name {
	case "/exit", "/quit":
		return true
	case "/help":
		fmt.Fprint(c.out, helpText)
	case "/tools":
		width := 13
		for _, t := range c.tools.Tools() {
			width = max(width, len(t.Name))
		}
		// Each tool's description is wrapped at the terminal's width,
		// between words, under itself.
		for _, t := range c.tools.Tools() {
			head := fmt.Sprintf("  %-*s ", width, t.Name)
			room := c.width() - 1 - utf8.RuneCountInString(head)
			lines := wrapWords(firstSentence(t.Description), room)
			source := "[" + c.sources[t.Name] + "]" // where it comes from, kept whole
			if last := lines[len(lines)-1]; last == "" || utf8.RuneCountInString(last)+1+utf8.RuneCountInString(source) <= room {
				lines[len(lines)-1] = strings.TrimLeft(last+" "+c.st.dim(source), " ")
			} else {
				lines = append(lines, c.st.dim(source))
			}
			for i, l := range lines {
				if i > 0 {
					head = strings.Repeat(" ", utf8.RuneCountInString(head))
				}
				fmt.Fprintln(c.out, head+l)
			}
		}
	case "/reset":
		if err = c.convs.reset(ctx); err == nil {
			fmt.Fprintln(c.out, c.st.dim("(conversation cleared)"))
		}
	case "/history":
		err = c.printHistory(ctx)
	case "/new":
		if err = c.convs.start(ctx, arg); err == nil {
			fmt.Fprintln(c.out, c.st.dim(fmt.Sprintf("(conversation %q)", c.convs.name)))
		}
	case "/sessions":
		err = c.convs.list(ctx, c.out, c.st)
	default:
		fmt.Fprintf(c.out, "unknown command %s; /help lists them\n", name)
	}
	if err != nil {
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
	}
	return false
}

const helpText = `Ask anything; the model may call these tools: get_weather (made-up data),
current_time (IANA zones such as Europe/Paris), calculate (arithmetic) and
count_primes (primes below a number: a long one shows its progress).
Commands:
  /help         this text
  /tools        the tools the model can call, and where each comes from
  /reset        forget the conversation
  /history      show the conversation so far
  /new [name]   start a new conversation, or go to the one named
  /sessions     list the conversations (kept in a file with -session)
  /trip CITY    plan a day in CITY (a typed answer; an agent asks another)
  /exit         leave (Ctrl-D works too)
Ctrl-C stops the answer in progress; at the prompt it leaves.
`

// ask sends one message and streams the answer.
func (c *chat) ask(ctx context.Context, message string) {
	actx, done := c.answering(ctx)
	defer done()

	p := printer{out: c.out, st: c.st, verbose: c.opts.verbose, live: c.opts.live, width: c.width(), atLineStart: true}
	defer p.stopSpinner()
	var res *agent.Result
	var err error
	// The conversation is loaded, continued and saved, failed runs too:
	// their partial history ends where the conversation can go on.
	input := genai.NewContentFromText(message, genai.RoleUser)
	for ev, e := range session.Stream(actx, c.agent, c.convs.store, c.convs.name, input) {
		p.event(ev)
		switch ev.Kind {
		case agent.EventApproval:
			c.decide(actx, ev.Approval)
			p.atLineStart = true
		case agent.EventDone:
			res, err = ev.Result, e
		}
	}
	p.endLine()
	if !c.opts.interactive {
		defer fmt.Fprintln(c.out) // a blank line between answers
	}
	if res != nil {
		p.sources(res.Grounding)
	}
	switch {
	case err == nil:
		if c.opts.verbose {
			fmt.Fprintln(c.out, c.st.dim(usageLine(res)))
		}
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(c.out, c.st.dim("(answer stopped)"))
	case errors.Is(err, agent.ErrMaxTokens):
		fmt.Fprintln(c.out, c.st.dim("(answer cut: the model reached its output token limit)"))
	case errors.Is(err, agent.ErrContinuation):
		fmt.Fprintln(c.out, c.st.dim("(answer cut: "+err.Error()+")"))
	case errors.Is(err, agent.ErrTooManyToolCalls):
		fmt.Fprintln(c.out, c.st.dim("(answer stopped: the model searched too many times in a row)"))
	default:
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
	}
	c.tracing.flush() // the answer's span tree, after the answer
}

// banner is the line the chat starts with on a terminal.
func (c *chat) banner() string {
	model := c.model
	switch model {
	case offline.ModelName:
		model = "the offline demo model (no GEMINI_API_KEY)"
	case offline.LiveModelName:
		model = "the offline demo model over the Live API (no GEMINI_API_KEY)"
	}
	return fmt.Sprintf("Chatting with %s; /help for commands.", model)
}

// readLine shows prompt and returns the next line of input: io.EOF when
// the input ended, ctx's error when it is done first. A line being read
// when ctx ends goes to the next call, whose prompt is then shown here
// (on a terminal the line editor keeps showing the prompt it read with).
func (c *chat) readLine(ctx context.Context, prompt string) (string, error) {
	c.inputMu.Lock()
	defer c.inputMu.Unlock()
	return c.readLineLocked(ctx, prompt)
}

// readLineLocked is readLine, with inputMu held.
func (c *chat) readLineLocked(ctx context.Context, prompt string) (string, error) {
	if !c.reading {
		select {
		case c.asks <- prompt:
			c.reading = true
		case <-ctx.Done():
			return "", ctx.Err()
		}
	} else if c.opts.term == nil && c.opts.interactive {
		fmt.Fprint(c.out, prompt)
	}
	select {
	case r := <-c.lines:
		c.reading = false
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// decide asks whether a run's tool call may run (see approve), and
// approves or denies it.
func (c *chat) decide(ctx context.Context, ap *agent.Approval) {
	if c.approve(ctx, ap.Call) {
		ap.Approve()
		return
	}
	ap.Deny("the user did not allow this call")
}

// approve asks whether call may run, and reads the answer from the next
// input line: y or yes runs it; anything else, the end of the input or
// Ctrl-C refuses it.
func (c *chat) approve(ctx context.Context, call *genai.FunctionCall) bool {
	prompt := c.st.prompt(fmt.Sprintf("run %s %s? [y/N] ", call.Name, compactJSON(call.Args)))
	if !c.opts.interactive {
		fmt.Fprint(c.out, prompt) // piped: the question and its answer show as on a terminal
	}
	line, _ := c.readLine(ctx, prompt)
	answer := strings.ToLower(strings.TrimSpace(line))
	if !c.opts.interactive {
		fmt.Fprintln(c.out, answer)
	}
	return answer == "y" || answer == "yes"
}

// printHistory shows the conversation, one line per part, labelled with
// who wrote it: user, model, or tool (a tool's result, which the model
// receives in a user content; "denied" and the reason for a call the
// user refused).
func (c *chat) printHistory(ctx context.Context) error {
	contents, err := c.convs.load(ctx)
	if err != nil {
		return err
	}
	if len(contents) == 0 {
		fmt.Fprintln(c.out, c.st.dim("(no conversation yet)"))
		return nil
	}
	for _, content := range contents {
		for _, part := range content.Parts {
			switch {
			case part.FunctionCall != nil:
				fmt.Fprintf(c.out, "%-6s call %s %s\n", content.Role+":", part.FunctionCall.Name, compactJSON(part.FunctionCall.Args))
			case part.FunctionResponse != nil:
				// A tool's result travels in a user content; the user did
				// not write it. A call refused rather than run says so.
				fr := part.FunctionResponse
				if reason, denied := geminiadapter.Denied(fr); denied {
					fmt.Fprintf(c.out, "%-6s %s denied: %s\n", "tool:", fr.Name, reason)
					continue
				}
				fmt.Fprintf(c.out, "%-6s %s -> %s\n", "tool:", fr.Name, compactJSON(fr.Response))
			case part.Thought:
				continue
			case part.Text != "":
				fmt.Fprintf(c.out, "%-6s %s\n", content.Role+":", part.Text)
			}
		}
	}
	return nil
}

// width is the output's width in columns.
func (c *chat) width() int {
	if c.opts.width != nil {
		if w := c.opts.width(); w > 0 {
			return w
		}
	}
	return defaultWidth
}

// printer renders a stream's events.
type printer struct {
	out         io.Writer
	st          style
	verbose     bool
	live        bool // draw progress bars in place (see progress.go), and the spinner
	width       int  // the output's width in columns
	atLineStart bool
	inThought   bool
	spin        *spinner // running while the model thinks; nil otherwise

	running []*running // the calls whose progress is shown
	drawn   int        // the bars' lines below the cursor's line
}

func (p *printer) event(ev *agent.Event) {
	if ev == nil {
		return
	}
	switch ev.Kind {
	case agent.EventModelRequest:
		p.startSpinner()
	case agent.EventText:
		if p.inThought {
			p.endLine()
			p.inThought = false
		}
		p.write(ev.Text)
	case agent.EventThought:
		if p.verbose {
			p.inThought = true
			p.write(p.st.dim(ev.Text))
		}
	case agent.EventToolCall:
		p.line(p.st.tool(fmt.Sprintf("→ %s %s", ev.Call.Name, compactJSON(ev.Call.Args))))
	case agent.EventToolProgress:
		p.progress(ev)
	case agent.EventApproval:
		p.clearBars() // the question goes where the bars were; they come back with the next report
	case agent.EventDone:
		p.clearBars()
		p.running = nil
	case agent.EventToolResult:
		p.finished(ev.Turn, ev.Index)
		r := ev.ToolResult
		mark, body := "←", compactJSON(r.Output)
		if r.IsError {
			mark = "✗"
			if s, ok := r.Output.(string); ok {
				body = s
			}
		}
		p.line(p.st.tool(fit(mark+" "+ev.Call.Name+" ", body, " ("+roundDuration(ev.Duration).String()+")", p.width)))
	case agent.EventServerToolCall:
		// A tool Gemini runs itself: shown, never run here.
		p.line(p.st.tool(fmt.Sprintf("⌕ %s %s", agent.ServerToolName(ev.Part), compactJSON(serverArgs(ev.Part)))))
	case agent.EventRetry:
		if ev.Delay > 0 {
			p.line(p.st.dim(fmt.Sprintf("(model call failed, retrying in %s: %v)", ev.Delay.Round(time.Millisecond), ev.Err)))
		}
	}
}

// serverArgs is what a built-in tool's invocation was given.
func serverArgs(p *genai.Part) any {
	if p.ExecutableCode != nil {
		return p.ExecutableCode.Code
	}
	return p.ToolCall.Args
}

// sources lists the web pages and documents that ground an answer.
func (p *printer) sources(g *genai.GroundingMetadata) {
	if g == nil {
		return
	}
	for _, c := range g.GroundingChunks {
		switch {
		case c.Web != nil:
			p.line(p.st.dim(fmt.Sprintf("source: %s (%s)", c.Web.Title, c.Web.URI)))
		case c.RetrievedContext != nil:
			p.line(p.st.dim(fmt.Sprintf("source: %s", cmp.Or(c.RetrievedContext.Title, c.RetrievedContext.URI, c.RetrievedContext.DocumentName))))
		}
	}
}

// startSpinner shows a spinner while the model thinks, on a terminal, when
// the cursor is at the start of a line with no progress bar below.
func (p *printer) startSpinner() {
	if !p.live || p.spin != nil || !p.atLineStart || p.drawn > 0 {
		return
	}
	p.spin = startSpinner(p.out, func(frame string) string { return p.st.dim(frame + " thinking…") })
}

// stopSpinner erases the spinner, if it is shown.
func (p *printer) stopSpinner() {
	p.spin.stop()
	p.spin = nil
}

// write writes streamed text.
func (p *printer) write(s string) {
	if s == "" {
		return
	}
	p.clearBars()
	fmt.Fprint(p.out, s)
	p.atLineStart = strings.HasSuffix(s, "\n")
}

// line writes s on a line of its own, above the progress bars.
func (p *printer) line(s string) {
	bars := p.drawn > 0 || (p.live && len(p.running) > 0)
	p.clearBars()
	p.endLine()
	fmt.Fprintln(p.out, s)
	if bars {
		p.redraw()
	}
}

// endLine ends the current line, if text is on it.
func (p *printer) endLine() {
	if !p.atLineStart {
		fmt.Fprintln(p.out)
		p.atLineStart = true
	}
}

// usageLine summarizes an answer for -v: the input tokens with their
// billed split (at the full input price, and read from a cache at the
// cached price), the output and thinking tokens.
func usageLine(res *agent.Result) string {
	var latency time.Duration
	calls := 0
	for _, t := range res.Turns {
		latency += t.Latency + t.ToolTime
		calls += len(t.Calls)
	}
	u := res.Usage
	return fmt.Sprintf("[%d model turns · %d tool calls · %d tokens in (%d full price, %d cached), %d out, %d thinking · %s]",
		len(res.Turns), calls, u.UncachedTokens()+u.CachedTokens, u.UncachedTokens(), u.CachedTokens,
		u.CandidatesTokens, u.ThoughtsTokens, latency.Round(time.Millisecond))
}

// roundDuration rounds d for display: to the millisecond, or to the
// microsecond below one.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// shorten cuts s to at most n runes (at least 1), marking the cut.
func shorten(s string, n int) string {
	n = max(n, 1)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// fit cuts body so that head, body and tail make a line that fits a
// terminal width columns wide: in width-1 columns, since writing the last
// column leaves some terminals' cursor on the next line. When head and
// tail alone do not fit, the whole line is cut. A rune is taken for a
// column.
func fit(head, body, tail string, width int) string {
	room := width - 1 - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	if room < 1 {
		return shorten(head+body+tail, width-1)
	}
	return head + shorten(body, room) + tail
}

// compactJSON renders v as one line of JSON.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// wrapWords breaks text into lines of at most width runes, between
// words; a word longer than width is a line of its own (the terminal
// wraps it). A width below 20 is taken as 20.
func wrapWords(text string, width int) []string {
	width = max(width, 20)
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

func firstSentence(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] // a description in paragraphs (an OpenAPI operation's): the first line
	}
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// style decorates output for a terminal; without color it leaves text
// plain, with tool lines marked by their arrows.
type style struct{ color bool }

func newStyle(color bool) style { return style{color: color} }

func (s style) wrap(code, text string) string {
	if !s.color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) dim(text string) string    { return s.wrap("2", text) }
func (s style) tool(text string) string   { return s.wrap("2;36", text) }
func (s style) err(text string) string    { return s.wrap("31", text) }
func (s style) prompt(text string) string { return s.wrap("1", text) }
