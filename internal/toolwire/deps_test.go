package toolwire_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The core compiles no integration's dependency, and each provider's
// adapter compiles no other provider's SDK: a program pays only for the
// APIs it calls.
func TestAdaptersStayApart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	// go test caches a result by the files the test itself touches: touch
	// the module's sources, so that a new import reruns the test.
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
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{"toolset", []string{"google.golang.org/genai", "github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}},
		{"agent", []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "github.com/modelcontextprotocol/", "modernc.org/"}},
		{"geminiadapter", []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "github.com/modelcontextprotocol/", "modernc.org/"}},
		{"openaiadapter", []string{"google.golang.org/genai", "github.com/anthropics/anthropic-sdk-go"}},
		{"anthropicadapter", []string{"google.golang.org/genai", "github.com/openai/openai-go"}},
	} {
		cmd := exec.Command(goBin, "list", "-deps", "github.com/toolnexus/toolnexus-go/"+tc.pkg)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range tc.forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s compiles %s", tc.pkg, dep)
				}
			}
		}
	}
}
