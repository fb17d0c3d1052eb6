package httprr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadHTTPRR(t *testing.T) {
	hello := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	exchanges := [][2]string{
		{RequestText("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", hello), ResponseText(200, "text/event-stream",
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n")},
		{RequestText("/v1beta/models/gemini-2.5-flash:generateContent", hello), ResponseText(400, "application/json", `{"error":{"code":400,"message":"m"}}`)},
	}
	counted := Format(exchanges...)
	// The same trace after a checkout rewrote its line ends: the counts no
	// longer fit.
	stripped := strings.ReplaceAll(counted, "\r\n", "\n")
	for name, data := range map[string]string{"counted": counted, "line ends rewritten": stripped} {
		t.Run(name, func(t *testing.T) {
			got, err := Read("t.httprr", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("read %d exchanges; want 2", len(got))
			}
			if got[0].Req.URL.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || string(got[0].Body) != hello ||
				got[0].Resp.StatusCode != 200 || !strings.Contains(string(got[0].RespBody), `"finishReason":"STOP"`) {
				t.Errorf("exchange 0 = %s %s %q -> %d %q", got[0].Req.Method, got[0].Req.URL, got[0].Body, got[0].Resp.StatusCode, got[0].RespBody)
			}
			if got[1].Resp.StatusCode != 400 || string(got[1].Body) != hello || !strings.Contains(string(got[1].RespBody), `"message":"m"`) {
				t.Errorf("exchange 1 = %q -> %d %q", got[1].Body, got[1].Resp.StatusCode, got[1].RespBody)
			}
			if s := got[1].String(); s != "t.httprr#1 test/repo cassette.yaml@0" {
				t.Errorf("String() = %q", s)
			}
		})
	}
	if _, err := Read("bad.httprr", []byte("not a trace\n")); err == nil {
		t.Error("a file without the httprr header was read")
	}
}

func TestDir(t *testing.T) {
	// A clone without the recordings beside it: the test skips, saying why.
	t.Setenv(Env, "")
	clone := t.TempDir()
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module "+RootModule+"\n\ngo 1.25.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(clone, "internal", "fake")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	want := filepath.Join(filepath.Dir(clone), "shared", "realtraffic")
	if dir, why := Dir(); dir != "" || !strings.Contains(why, want+" does not exist") {
		t.Errorf("Dir() in a clone alone = %q, %q; want none, naming %s", dir, why, want)
	}
	// Beside it, they are found from the package's directory.
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, why := Dir(); dir != want {
		t.Errorf("Dir() = %q, %q; want %s", dir, why, want)
	}

	t.Setenv(Env, filepath.Join(t.TempDir(), "absent"))
	if dir, why := Dir(); dir != "" || !strings.Contains(why, "is not a directory") {
		t.Errorf("Dir() with a missing override = %q, %q", dir, why)
	}
	d := t.TempDir()
	t.Setenv(Env, d)
	if dir, _ := Dir(); dir != d {
		t.Errorf("Dir() = %q; want the override %q", dir, d)
	}

	// A linked worktree's .git file points into the main checkout.
	root := t.TempDir()
	main := filepath.Join(t.TempDir(), "main")
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := MainWorktree(root); got != main {
		t.Errorf("MainWorktree() = %q; want %q", got, main)
	}
	if got := MainWorktree(t.TempDir()); got != "" {
		t.Errorf("MainWorktree() of a checkout without a .git file = %q; want \"\"", got)
	}
}
