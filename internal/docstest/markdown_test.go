package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// block is a fenced code block of a markdown file.
type block struct {
	file string // relative to the repository's root
	line int    // of the opening fence, from 1
	lang string
	text string // without the fences, the fence's indentation removed
}

var fenceRE = regexp.MustCompile("^([ \t]*)```([A-Za-z0-9_-]*)\\s*$")

// blocks returns the fenced code blocks of a markdown file, in order.
func blocks(t *testing.T, root, file string) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var (
		out    []block
		cur    *block
		indent string
		lines  []string
	)
	for i, l := range strings.Split(string(data), "\n") {
		m := fenceRE.FindStringSubmatch(l)
		switch {
		case cur == nil && m != nil:
			cur, indent, lines = &block{file: file, line: i + 1, lang: m[2]}, m[1], nil
		case cur != nil && m != nil && m[2] == "":
			cur.text = strings.Join(lines, "\n")
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, strings.TrimPrefix(l, indent))
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block that does not end", file, cur.line)
	}
	return out
}

// command is a command of a ```sh block: its lines joined where they end
// in a backslash.
type command struct {
	line int    // in the markdown file
	text string // as written
	skip string // why it is skipped, or ""
}

var skipRE = regexp.MustCompile(`^#\s*docs-test:\s*skip\s*\((.+)\)\s*$`)

// commands returns the commands of a ```sh block, each with the reason
// to skip it that a marker comment line before it in the block gives: a
// marker skips the rest of its block.
func commands(b block) []command {
	var (
		out  []command
		skip string
		cur  *command
	)
	for i, l := range strings.Split(b.text, "\n") {
		if cur != nil {
			cur.text += "\n" + l
		} else {
			trimmed := strings.TrimSpace(l)
			if m := skipRE.FindStringSubmatch(trimmed); m != nil {
				skip = m[1]
				continue
			}
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			cur = &command{line: b.line + 1 + i, text: l, skip: skip}
		}
		if !strings.HasSuffix(l, `\`) {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// markdownFiles returns README.md and docs/*.md, relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return files
}

func TestCommandsParse(t *testing.T) {
	b := block{file: "x.md", line: 10, lang: "sh", text: "go run ./a   # runs a\n" +
		"# docs-test: skip (needs a key)\nGEMINI_API_KEY=… go test ./b \\\n  -run X\n\n# a note\ncurl -s \\\n  localhost:8080/x"}
	got := commands(b)
	want := []command{
		{line: 11, text: "go run ./a   # runs a"},
		{line: 13, text: "GEMINI_API_KEY=… go test ./b \\\n  -run X", skip: "needs a key"},
		{line: 17, text: "curl -s \\\n  localhost:8080/x", skip: "needs a key"},
	}
	if len(got) != len(want) {
		t.Fatalf("commands() = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
