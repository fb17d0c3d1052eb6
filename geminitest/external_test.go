package geminitest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/citest"
)

// The application and its test that TestImportFromAnotherModule writes
// into a module of its own: a weather assistant on the agent loop, tested
// offline with geminitest on both backends.
const (
	externalApp = `// Package weatherapp is an application outside toolnexus-go.
package weatherapp

import (
	"context"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type weatherIn struct {
	City string ` + "`json:\"city\"`" + `
}

// Ask answers a question about the weather.
func Ask(ctx context.Context, client *genai.Client, question string) (string, error) {
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
	res, err := agent.Run(ctx, agent.Config{Models: client.Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(weather)}, genai.Text(question))
	if err != nil {
		return "", err
	}
	return res.Text, nil
}
`
	externalTest = `package weatherapp_test

import (
	"context"
	"testing"

	"example.com/weatherapp"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

func TestAsk(t *testing.T) {
	for name, client := range map[string]func(*geminitest.Server) *genai.Client{
		"Gemini API": (*geminitest.Server).Client,
		"Vertex AI":  (*geminitest.Server).VertexClient,
	} {
		t.Run(name, func(t *testing.T) {
			srv := geminitest.Start(t)
			srv.Enqueue(
				geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
				geminitest.Text("Sunny in Paris."),
			)
			got, err := weatherapp.Ask(context.Background(), client(srv), "Weather in Paris?")
			if err != nil || got != "Sunny in Paris." {
				t.Fatalf("Ask() = %q, %v", got, err)
			}
			srv.AssertComplete(t)
			answers := srv.LastRequest().LastFunctionResponses("get_weather")
			if len(answers) != 1 || answers[0].Response["result"] != "sunny in Paris" {
				t.Errorf("answers sent = %+v", answers)
			}
		})
	}
}
`
)

// A program outside this module can import geminitest and test an agent
// application offline. This test writes such a module in a temporary
// directory, requiring this one through a replace directive, and runs its
// tests with the go command: it needs no network when the module cache
// holds this module's dependencies (go mod download fills it).
func TestImportFromAnotherModule(t *testing.T) {
	citest.Heavy(t, "builds and tests a separate module")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	genaiVersion := regexp.MustCompile(`(?m)^\s*google\.golang\.org/genai (v\S+)`).FindSubmatch(gomod)
	if genaiVersion == nil {
		t.Fatal("go.mod does not require google.golang.org/genai")
	}

	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/weatherapp\n\ngo 1.25.0\n\nrequire (\n" +
			"\tgithub.com/toolnexus/toolnexus-go v0.0.0\n" +
			"\tgoogle.golang.org/genai " + string(genaiVersion[1]) + "\n)\n\n" +
			"replace github.com/toolnexus/toolnexus-go => " + filepath.ToSlash(root) + "\n",
		// The module's dependencies are this module's: its checksums cover them.
		"go.sum":      string(gosum),
		"app.go":      externalApp,
		"app_test.go": externalTest,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "./...")
	cmd.Dir = dir
	// -mod=mod completes the throwaway go.mod from the module graph;
	// GOWORK=off keeps any workspace out; GOTOOLCHAIN=local keeps the go
	// command from fetching another toolchain.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in a module outside this one: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ok  \texample.com/weatherapp") {
		t.Errorf("go test output:\n%s\nwant the package to pass", out)
	}
}
