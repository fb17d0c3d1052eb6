package agent_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/citest"
)

// A program that imports only agent, in a module of its own that requires
// this one, compiles none of the integrations' dependencies. What matters
// is that module's build list, not this one's: with graph pruning, every
// requirement this go.mod lists (indirect ones included) enters the build
// list of a module that requires it, so a version chosen for an
// integration, an example or a test here (the chat's OTLP exporters, say)
// can raise a dependency of genai's into one that imports OpenTelemetry.
//
// The test writes such a module in a temporary directory, requiring this
// one through a replace directive, and lists the packages its program
// compiles with the go command: it needs no network when the module cache
// holds this module's dependencies (go mod download fills it).
//
// genai itself compiles grpc's client packages, at every version of
// genai and of cloud.google.com/go/auth the proxy serves (genai's client
// imports auth/httptransport, whose internal/transport imports
// github.com/google/s2a-go, which imports grpc; no build tag leaves it
// out): a program that imports genai at all compiles them, and agent's
// API is genai's types. So the test holds agent to what it can keep: every
// package outside this module that the program compiles is one that a
// program importing only genai compiles too, or one of the loop's own
// three dependencies (DESIGN.md).
func TestImportOnlyAgent(t *testing.T) {
	citest.Heavy(t, "lists the packages of a separate module")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/app\n\ngo 1.25.0\n\n" +
			"require github.com/toolnexus/toolnexus-go v0.0.0\n\n" +
			"replace github.com/toolnexus/toolnexus-go => " + filepath.ToSlash(root) + "\n",
		// The module's dependencies are this module's: its checksums cover them.
		"go.sum": string(gosum),
		// The reference: a program that imports only genai.
		"genaionly/main.go": `package main

import _ "google.golang.org/genai"

func main() {}
`,
		"main.go": `package main

import (
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
)

func main() {
	_, err := agent.New(agent.Config{})
	fmt.Println(err)
}
`,
	}
	if err := os.Mkdir(filepath.Join(dir, "genaionly"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -mod=mod completes the throwaway go.mod from the module graph;
	// GOWORK=off keeps any workspace out; GOTOOLCHAIN=local keeps the go
	// command from fetching another toolchain.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	deps := func(pkg string) string {
		cmd := exec.CommandContext(ctx, goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go list -deps %s in a module outside this one: %v\n%s", pkg, err, stderr)
		}
		return string(out)
	}
	out := deps(".")
	pkgs := strings.Fields(out)
	if !strings.Contains(out, "github.com/toolnexus/toolnexus-go/agent") {
		t.Fatalf("go list -deps lists no agent package:\n%s", out)
	}
	forbidden := []string{
		"go.opentelemetry.io/",                // otelagent, the chat's -trace
		"github.com/modelcontextprotocol/",    // mcptools
		"modernc.org/",                        // session/sqlitestore
		"go.temporal.io/",                     // temporalagent
		"github.com/getkin/kin-openapi/",      // openapitools
		"github.com/toolnexus/toolnexus-go/o", // otelagent itself
	}
	for _, p := range pkgs {
		for _, f := range forbidden {
			if strings.HasPrefix(p, f) {
				t.Errorf("a program that imports only agent compiles %s", p)
			}
		}
	}
	genai := map[string]bool{}
	for _, p := range strings.Fields(deps("./genaionly")) {
		genai[p] = true
	}
	own := []string{
		"example.com/app",
		"github.com/toolnexus/toolnexus-go/",
		"github.com/cenkalti/backoff/v4",   // retries
		"github.com/google/jsonschema-go/", // tools' input schemas
		"golang.org/x/sync/errgroup",       // the calls' dispatcher
	}
	for _, p := range pkgs {
		if !genai[p] && !slices.ContainsFunc(own, func(o string) bool { return strings.HasPrefix(p, o) }) {
			t.Errorf("a program that imports only agent compiles %s, which neither genai nor the loop's own dependencies bring", p)
		}
	}
	if t.Failed() {
		why := exec.CommandContext(ctx, goBin, "mod", "graph")
		why.Dir, why.Env = dir, env
		graph, _ := why.Output()
		var auth []string
		for _, line := range strings.Split(string(graph), "\n") {
			if strings.Contains(line, " cloud.google.com/go/auth@") {
				auth = append(auth, line)
			}
		}
		t.Logf("who requires cloud.google.com/go/auth (releases newer than genai's v0.9.3, such as v0.18.2, import otelhttp):\n%s",
			strings.Join(auth, "\n"))
	}
}
