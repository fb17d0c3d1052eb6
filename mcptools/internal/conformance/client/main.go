// The client command is mcptools' client as the MCP conformance suite
// tests one:
//
//	go run ./mcptools/internal/conformance/client URL
//
// The suite starts it with the URL of a server it plays, the scenario's
// name in MCP_CONFORMANCE_SCENARIO and, for some scenarios, a JSON object
// in MCP_CONFORMANCE_CONTEXT. It connects with mcptools.Connect over
// mcptools.NewHTTP, logging in with an mcptools.Login when the server asks
// for OAuth, and calls the tools the scenario expects through the toolset
// tools the client makes, as an agent would. The user's browser is played
// by an HTTP client that follows the authorization URL, which the suite's
// authorization server redirects at once to the login's loopback port.
// It exits non-zero when a step fails.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// scenarioTimeout bounds one scenario, within the 2 minutes that
// conformance_test.go gives the suite's scenarios.
const scenarioTimeout = 100 * time.Second

// clientIDMetadataURL is the client ID metadata document the suite's
// authorization servers accept as a client ID (auth/basic-cimd).
const clientIDMetadataURL = "https://conformance-test.local/client-metadata.json"

// A call is a tool call a scenario expects.
type call struct {
	name string
	args map[string]any
}

// calls are the tool calls of each scenario, after the connection and the
// listing every scenario makes. Every auth/ scenario calls test-tool.
var calls = map[string][]call{
	"initialize":                          nil,
	"tools_call":                          {{"add_numbers", map[string]any{"a": 5, "b": 3}}},
	"sse-retry":                           {{"test_reconnection", map[string]any{}}},
	"elicitation-sep1034-client-defaults": {{"test_client_elicitation_defaults", map[string]any{}}},
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance client: ")
	if len(os.Args) != 2 {
		log.Fatal("usage: client URL (with MCP_CONFORMANCE_SCENARIO set)")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var config map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &config); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	if err := run(ctx, os.Args[1], scenario, config); err != nil {
		log.Fatalf("scenario %q: %v", scenario, err)
	}
}

// run plays scenario against the server at url.
func run(ctx context.Context, url, scenario string, config map[string]any) error {
	want, ok := calls[scenario]
	if strings.HasPrefix(scenario, "auth/") {
		want, ok = []call{{"test-tool", map[string]any{}}}, true
	}
	if !ok {
		return fmt.Errorf("unknown scenario")
	}
	login, err := mcptools.NewLogin(url, &mcptools.LoginOptions{
		Open:                browse,
		Timeout:             scenarioTimeout,
		ClientName:          "toolnexus-go conformance client",
		ClientIDMetadataURL: clientIDMetadataURL,
		Client:              preregistered(config),
		Logger:              slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	c, err := mcptools.Connect(ctx, mcptools.NewHTTP(url, &mcptools.HTTPOptions{OAuth: login}), &mcptools.Options{
		ClientOptions: &mcp.ClientOptions{ElicitationHandler: accept},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	set, err := toolset.New(c.Tools()...)
	if err != nil {
		return err
	}
	for _, cl := range want {
		t, ok := set.Lookup(cl.name)
		if !ok {
			return fmt.Errorf("the server has no tool %s", cl.name)
		}
		if r := t.Execute(ctx, cl.args); r.IsError {
			return fmt.Errorf("calling %s: %v", cl.name, r.Output)
		}
	}
	return nil
}

// accept plays the user asked for input by the server: they accept and
// fill in nothing, so that the client applies the schema's defaults
// (elicitation-sep1034-client-defaults).
func accept(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// preregistered is the client the scenario registered beforehand, if its
// context gives one (auth/pre-registration).
func preregistered(config map[string]any) *oauthex.ClientCredentials {
	id, _ := config["client_id"].(string)
	if id == "" {
		return nil
	}
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret, _ := config["client_secret"].(string); secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// browse plays the user's browser: it follows the authorization URL, and
// the redirects, to the login's loopback port.
func browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the browser: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.Request.URL.Hostname() != "127.0.0.1" {
		// The authorization server did not send the browser back.
		return fmt.Errorf("the browser: %s answered %s", resp.Request.URL.Host, resp.Status)
	}
	return nil
}
