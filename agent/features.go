package agent

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// features is what an agent keeps for the parts of generateContent that
// came in 2026: built-in tools beside function declarations (builtin.go),
// answers continued over several requests (continuation.go) and service
// tiers. A plain agent, one that uses none of them, pays for none: its runs
// read two fields of it per model call.
type features struct {
	builtins         []*genai.Tool // Config.BuiltinTools, as given
	maxContinuations int           // Config.MaxContinuations, as given

	// What prepare derives from the request config.

	// hops is how many continuation requests the loop makes for one
	// answer; 0 when it makes none.
	hops int
	// sdk is set when the caller turned genai's own automatic
	// continuation on: genai merges the hops, and the loop reads the
	// first hop's prompt size from it.
	sdk bool
	// off says why the loop does not continue answers, when hops is 0.
	off string
	// flex is set when the requests ask for the flex tier, whose shed
	// requests the retry policy waits longer for.
	flex bool
}

// errContinuationToken refuses a continuation token in Config.GenerateConfig.
var errContinuationToken = errors.New("agent: GenerateConfig.ContinuationToken is set: the loop sends continuation tokens itself (see Config.MaxContinuations)")

// prepare completes c, a request config New made for the agent (its own
// copy), with what the features need, and notes what runs need of them:
//
//   - the built-in tools join the request's tools, before the function
//     declarations (group, the last of c.Tools when it is not nil), as the
//     API's documentation and the real traffic order them;
//   - with built-in tools and function declarations in one request, the
//     Gemini API asks for toolConfig.includeServerSideToolInvocations (it
//     refuses the mix without it, "Please enable
//     tool_config.include_server_side_tool_invocations to use Built-in
//     tools with Function calling."): it is set unless the caller set it.
//     Vertex AI has no such field (genai refuses it before sending) and
//     takes the mix without it;
//   - genai's automatic continuation is turned off, the loop continuing
//     answers itself, unless the caller chose (AutomaticContinuation set).
func (f *features) prepare(c *genai.GenerateContentConfig, group *genai.Tool, backend genai.Backend) error {
	if len(c.ContinuationToken) > 0 {
		return errContinuationToken
	}
	if len(f.builtins) > 0 {
		for i, t := range f.builtins {
			if err := checkBuiltin(t); err != nil {
				return fmt.Errorf("agent: BuiltinTools[%d]: %w", i, err)
			}
		}
		n := len(c.Tools)
		if group != nil {
			n-- // the declarations come last
		}
		tools := make([]*genai.Tool, 0, len(c.Tools)+len(f.builtins))
		tools = append(append(append(tools, c.Tools[:n]...), f.builtins...), c.Tools[n:]...)
		c.Tools = tools
	}
	vertex := backend == genai.BackendVertexAI
	if tc := c.ToolConfig; vertex && tc != nil && tc.IncludeServerSideToolInvocations != nil && *tc.IncludeServerSideToolInvocations {
		return errors.New("agent: GenerateConfig.ToolConfig.IncludeServerSideToolInvocations is not supported on Vertex AI (Config.Backend), which takes built-in tools beside function declarations without it")
	}
	if !vertex && hasBuiltin(c.Tools) && hasDeclarations(c.Tools) &&
		(c.ToolConfig == nil || c.ToolConfig.IncludeServerSideToolInvocations == nil) {
		tc := genai.ToolConfig{}
		if c.ToolConfig != nil {
			tc = *c.ToolConfig
		}
		on := true
		tc.IncludeServerSideToolInvocations = &on
		c.ToolConfig = &tc
	}

	f.hops, f.sdk, f.off = 0, false, ""
	switch {
	case c.AutomaticContinuation != nil && *c.AutomaticContinuation:
		f.sdk = true
		f.off = "genai's automatic continuation (GenerateConfig.AutomaticContinuation) left it cut"
	case c.AutomaticContinuation != nil:
		f.off = "continuation is off (GenerateConfig.AutomaticContinuation is false)"
	case f.maxContinuations < 0:
		f.off = "continuation is off (Config.MaxContinuations is negative)"
		c.AutomaticContinuation = new(bool)
	default:
		f.hops = orDefault(f.maxContinuations, DefaultMaxContinuations)
		c.AutomaticContinuation = new(bool)
	}
	f.flex = strings.EqualFold(string(c.ServiceTier), string(genai.ServiceTierFlex))
	return nil
}
