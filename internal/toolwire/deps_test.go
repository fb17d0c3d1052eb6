package toolwire_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/citest"
)

// The core compiles no integration's dependency, the root module's graph
// holds neither provider's SDK (their requirements, such as
// anthropic-sdk-go's invopop/jsonschema v0.14.0, which breaks Genkit,
// reach only the users of their adapter's module), and each adapter
// compiles no other provider's SDK: a program pays only for the APIs it
// calls.
func TestAdaptersStayApart(t *testing.T) {
	citest.Heavy(t, "runs go list in every module")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	// go test caches a result by the files the test itself touches: touch
	// the sources, so that a new import reruns the test.
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sdks := []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}
	for _, tc := range []struct {
		dir       string // the module's directory, from the root
		args      []string
		forbidden []string
	}{
		{".", []string{"list", "-m", "all"}, append([]string{"gocloud.dev"}, sdks...)},
		{".", []string{"list", "-deps", "./toolset"}, append([]string{"google.golang.org/genai"}, sdks...)},
		{".", []string{"list", "-deps", "./agent"}, append([]string{"github.com/modelcontextprotocol/", "modernc.org/"}, sdks...)},
		{".", []string{"list", "-deps", "./geminiadapter"}, append([]string{"github.com/modelcontextprotocol/", "modernc.org/"}, sdks...)},
		{"openaiadapter", []string{"list", "-deps", "."}, []string{"google.golang.org/genai", "github.com/anthropics/anthropic-sdk-go"}},
		{"anthropicadapter", []string{"list", "-deps", "."}, []string{"google.golang.org/genai", "github.com/openai/openai-go"}},
	} {
		cmd := exec.Command(goBin, tc.args...)
		cmd.Dir = filepath.Join(root, tc.dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("(in %s) go %s: %v", tc.dir, strings.Join(tc.args, " "), err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			for _, f := range tc.forbidden {
				if strings.HasPrefix(line, f) {
					t.Errorf("(in %s) go %s lists %s", tc.dir, strings.Join(tc.args, " "), line)
				}
			}
		}
	}
}
