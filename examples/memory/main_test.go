package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// genai's dependencies start an OpenCensus worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// The demo, offline: the second conversation's run is given what the
// user said in the first, and answers from it.
func TestDemo(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "memory.db")}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "memories given to the model:\n    - ") || !strings.Contains(out.String(), `You told me before: "I'm allergic to peanuts`) {
		t.Errorf("the demo printed:\n%s", out.String())
	}
}

var lastLine = regexp.MustCompile(`^recall@5=(0\.\d{3}) recall@10=(0\.\d{3}) questions=(\d+)$`)

// The LoCoMo figures of the two shared conversations: a line per file and
// the last line in the form, above the aim (recall@5 at least
// 0.60). The conversations are not part of the repository: the test skips
// without them.
func TestLoCoMo(t *testing.T) {
	files := []string{filepath.Join("..", "..", "..", "shared", "locomo", "26.json"), filepath.Join("..", "..", "..", "shared", "locomo", "30.json")}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("the LoCoMo conversations are not here (%v): they are in ../shared/locomo beside the repository", err)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"-locomo"}, files...), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "26.json: ") || !strings.HasPrefix(lines[1], "30.json: ") {
		t.Fatalf("output:\n%s", out.String())
	}
	m := lastLine.FindStringSubmatch(lines[2])
	if m == nil {
		t.Fatalf("last line %q is not recall@5=0.xxx recall@10=0.xxx questions=N", lines[2])
	}
	r5, _ := strconv.ParseFloat(m[1], 64)
	if r5 < 0.60 || m[3] != "231" {
		t.Errorf("%s: recall@5 below the aim of 0.60, or not the 231 questions", lines[2])
	}
	t.Log(out.String())
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-locomo"}, &out); err == nil || !strings.Contains(err.Error(), "needs conversation files") {
		t.Errorf("-locomo alone: %v", err)
	}
	if err := run(context.Background(), []string{"-locomo", "missing.json"}, &out); err == nil {
		t.Error("a missing file: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"qa": []}`), 0o644)
	if err := run(context.Background(), []string{"-locomo", bad}, &out); err == nil || !strings.Contains(err.Error(), "not a LoCoMo conversation") {
		t.Errorf("a file that is not a conversation: %v", err)
	}
}
