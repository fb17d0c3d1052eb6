package devui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"google.golang.org/genai"
)

var sprintf = fmt.Sprintf

// infoJSON describes the served agent and the server, for the page.
type infoJSON struct {
	Title string `json:"title"`
	User  string `json:"user"`
	// Thread is the conversation the page opens when its address names
	// none.
	Thread       string                 `json:"thread,omitempty"`
	Agent        agentJSON              `json:"agent"`
	Server       serverJSON             `json:"server"`
	BrowserTools []agentserver.ToolDecl `json:"browserTools"`
	// Recording says whether runs are recorded (the timelines), and how
	// many of a user's are kept.
	Recording bool `json:"recording"`
	// Live says whether the voice mode's route (Options.Live) is served.
	Live bool `json:"live"`
	// ArtifactsPath is the prefix of the links to files the chat's stream
	// sends (agentserver.Config.ArtifactsPath), which the page serves
	// under api/artifacts/; empty when the server keeps no files.
	ArtifactsPath string `json:"artifactsPath,omitempty"`
	KeepRuns      int    `json:"keepRuns,omitempty"`
}

type agentJSON struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	Typed bool   `json:"typed"`
	// Config is the request config of the first model call, without the
	// tools: system instruction, sampling, tool config, thinking.
	Config json.RawMessage `json:"config"`
	// Tools are the agent's tools, each with its declaration as Gemini
	// receives it.
	Tools  []toolJSON `json:"tools"`
	Limits limitsJSON `json:"limits"`
}

type toolJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Declaration json.RawMessage `json:"declaration"`
}

type limitsJSON struct {
	MaxTurns        int       `json:"maxTurns"`
	MaxParallel     int       `json:"maxParallel"`
	MaxCallsPerTurn int       `json:"maxCallsPerTurn"`
	ToolTimeoutMs   int64     `json:"toolTimeoutMs"` // 0: none
	MaxOutputBytes  int       `json:"maxOutputBytes"`
	Retry           retryJSON `json:"retry"`
}

type retryJSON struct {
	MaxAttempts    int     `json:"maxAttempts"`
	InitialDelayMs int64   `json:"initialDelayMs"`
	MaxDelayMs     int64   `json:"maxDelayMs"`
	Multiplier     float64 `json:"multiplier"`
	Jitter         float64 `json:"jitter"`
	MaxElapsedMs   int64   `json:"maxElapsedMs"`
	MaxReasks      int     `json:"maxReasks"`
}

type serverJSON struct {
	ApprovalTimeoutMs int64 `json:"approvalTimeoutMs"`
	RunTimeoutMs      int64 `json:"runTimeoutMs"` // 0: none
	KeepFinishedMs    int64 `json:"keepFinishedMs"`
	MaxRuns           int   `json:"maxRuns"`           // 0: none
	MaxRunsPerUser    int   `json:"maxRunsPerUser"`    // 0: none
	MaxThreadsPerUser int   `json:"maxThreadsPerUser"` // 0: none
	MaxBytesPerUser   int64 `json:"maxBytesPerUser"`   // 0: none
	MaxBodyBytes      int64 `json:"maxBodyBytes"`
	MaxMessages       int   `json:"maxMessages"`
	MaxParts          int   `json:"maxParts"`
	MaxTools          int   `json:"maxTools"`
}

func msOf(d time.Duration) int64 { return d.Milliseconds() }

// info describes the agent as it runs: its name, model, tools with their
// declarations as Gemini receives them (the agent's own conversion, sent
// with every model call), and limits.
func (h *handler) info(r *http.Request, user string) (any, error) {
	steps := h.s.Agent().Steps()
	cfg := h.s.Config()
	out := &infoJSON{Title: h.opts.Title, User: user, Thread: h.opts.Thread, BrowserTools: h.opts.BrowserTools,
		Recording: h.rec != nil, Live: h.opts.Live != nil}
	if h.s.Artifacts() != nil {
		out.ArtifactsPath = h.s.Config().ArtifactsPath
	}
	if out.BrowserTools == nil {
		out.BrowserTools = []agentserver.ToolDecl{}
	}
	if h.rec != nil {
		out.KeepRuns = h.rec.opts.KeepRuns
	}
	a := &out.Agent
	a.Name, a.Model, a.Typed = steps.Name(), steps.Model(), steps.Typed()
	rc := steps.RequestConfig(0)
	decls := map[string]*genai.FunctionDeclaration{}
	if rc != nil {
		for _, t := range rc.Tools {
			for _, d := range t.FunctionDeclarations {
				decls[d.Name] = d
			}
		}
		c := *rc
		c.Tools = nil
		var err error
		if a.Config, err = redacted(&c); err != nil {
			return nil, err
		}
	} else {
		a.Config = json.RawMessage("{}")
	}
	a.Tools = []toolJSON{}
	if set := steps.Tools(); set != nil {
		for _, t := range set.Tools() {
			tj := toolJSON{Name: t.Name, Description: t.Description, Declaration: json.RawMessage("null")}
			if d := decls[t.Name]; d != nil {
				b, err := json.Marshal(d)
				if err != nil {
					return nil, err
				}
				tj.Declaration = b
			}
			a.Tools = append(a.Tools, tj)
		}
	}
	l := steps.Limits()
	a.Limits = limitsJSON{MaxTurns: l.MaxTurns, MaxParallel: l.MaxParallel, MaxCallsPerTurn: l.MaxCallsPerTurn,
		ToolTimeoutMs: msOf(l.ToolTimeout), MaxOutputBytes: l.MaxOutputBytes,
		Retry: retryJSON{MaxAttempts: l.Retry.MaxAttempts, InitialDelayMs: msOf(l.Retry.InitialDelay), MaxDelayMs: msOf(l.Retry.MaxDelay),
			Multiplier: l.Retry.Multiplier, Jitter: l.Retry.Jitter, MaxElapsedMs: msOf(l.Retry.MaxElapsed), MaxReasks: l.Retry.MaxReasks}}
	// The Config's limits are less than zero when there is none: 0 here.
	out.Server = serverJSON{ApprovalTimeoutMs: msOf(cfg.ApprovalTimeout), RunTimeoutMs: msOf(max(cfg.RunTimeout, 0)),
		KeepFinishedMs: msOf(cfg.KeepFinished), MaxRuns: max(cfg.MaxRuns, 0), MaxRunsPerUser: max(cfg.MaxRunsPerUser, 0),
		MaxThreadsPerUser: max(cfg.MaxThreadsPerUser, 0), MaxBytesPerUser: max(cfg.MaxBytesPerUser, 0), MaxBodyBytes: cfg.MaxBodyBytes,
		MaxMessages: cfg.MaxMessages, MaxParts: cfg.MaxParts, MaxTools: cfg.MaxTools}
	return out, nil
}
