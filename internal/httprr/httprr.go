// Package httprr reads httprr traces (golang.org/x/oscar/internal/httprr):
// the recordings of the real Gemini API and Vertex AI in
// ../shared/realtraffic beside the repository, which the fake's conformance
// test and the loop's tests replay. Tests that read them skip, saying why,
// where they are absent.
package httprr

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// An Exchange is one request and its response, read from an httprr trace.
type Exchange struct {
	File     string // the trace's base name
	Index    int    // its position in the trace, from 0
	Req      *http.Request
	Body     []byte // the request body
	Resp     *http.Response
	RespBody []byte // the response body
}

// Header starts every httprr trace (golang.org/x/oscar/internal/httprr).
const Header = "httprr trace v1\n"

// Read reads the exchanges of an httprr trace: the line "httprr trace
// v1", then for each exchange a line "N M" and N bytes of HTTP request
// followed by M bytes of HTTP response, as net/http writes them.
//
// Some traces had their line ends rewritten from CRLF to LF after they were
// recorded (by a checkout with autocrlf, or an editor), so that N and M
// count bytes that are no longer there. When the counts do not fit, the
// trace is read by its structure instead: an exchange ends where the next
// one's "N M" line is followed by a request line, and a request's body is
// its Content-Length bytes.
func Read(name string, data []byte) ([]Exchange, error) {
	rest, ok := bytes.CutPrefix(data, []byte(Header))
	if !ok {
		return nil, fmt.Errorf("%s: not an httprr trace (no %q line)", name, Header[:len(Header)-1])
	}
	pairs, err := splitCounted(rest)
	if err != nil {
		var lerr error
		if pairs, lerr = splitByStructure(rest); lerr != nil {
			return nil, fmt.Errorf("%s: %v; read by structure: %v", name, err, lerr)
		}
	}
	var out []Exchange
	for i, p := range pairs {
		ex, err := parseExchange(p[0], p[1])
		if err != nil {
			return nil, fmt.Errorf("%s: exchange %d: %v", name, i, err)
		}
		ex.File, ex.Index = name, i
		out = append(out, ex)
	}
	return out, nil
}

// splitCounted splits a trace's exchanges by their "N M" counts.
func splitCounted(b []byte) ([][2][]byte, error) {
	var out [][2][]byte
	for len(b) > 0 {
		line, after, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil, errors.New("a count line without a line end")
		}
		var n, m int
		if _, err := fmt.Sscanf(string(line), "%d %d", &n, &m); err != nil || n < 0 || m < 0 {
			return nil, fmt.Errorf("not a count line: %.40q", line)
		}
		if n+m > len(after) {
			return nil, fmt.Errorf("counts %d %d exceed the %d bytes left", n, m, len(after))
		}
		req, resp := after[:n], after[n:n+m]
		if _, err := parseExchange(req, resp); err != nil {
			return nil, fmt.Errorf("the counted exchange does not parse: %v", err)
		}
		out = append(out, [2][]byte{req, resp})
		b = after[n+m:]
	}
	return out, nil
}

// exchangeStart matches the count line of an exchange and the request
// line that follows it.
var exchangeStart = regexp.MustCompile(`(?m)^\d+ \d+\n(?:POST|GET|PUT|PATCH|DELETE) `)

// splitByStructure splits a trace whose counts no longer fit its bytes.
func splitByStructure(b []byte) ([][2][]byte, error) {
	starts := exchangeStart.FindAllIndex(b, -1)
	if len(starts) == 0 || starts[0][0] != 0 {
		return nil, errors.New("no exchange at the start")
	}
	var out [][2][]byte
	for i, s := range starts {
		end := len(b)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		seg := b[s[0]:end]
		seg = seg[bytes.IndexByte(seg, '\n')+1:]
		br := bytes.NewReader(seg)
		r := bufio.NewReader(br)
		req, err := http.ReadRequest(r)
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return nil, fmt.Errorf("request body: %v", err)
		}
		n := len(seg) - br.Len() - r.Buffered()
		out = append(out, [2][]byte{seg[:n], seg[n:]})
	}
	return out, nil
}

// parseExchange parses one request and its response.
func parseExchange(reqBytes, respBytes []byte) (Exchange, error) {
	br := bytes.NewReader(reqBytes)
	r := bufio.NewReader(br)
	req, err := http.ReadRequest(r)
	if err != nil {
		return Exchange{}, fmt.Errorf("request: %v", err)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return Exchange{}, fmt.Errorf("request body: %v", err)
	}
	if left := br.Len() + r.Buffered(); left > 0 {
		return Exchange{}, fmt.Errorf("%d bytes after the request's body", left)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(respBytes)), req)
	if err != nil {
		return Exchange{}, fmt.Errorf("response: %v", err)
	}
	rbody, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Exchange{}, fmt.Errorf("response body: %v", err)
	}
	return Exchange{Req: req, Body: body, Resp: resp, RespBody: rbody}, nil
}

// String names the exchange by its source cassette and its place in the
// trace.
func (ex Exchange) String() string {
	src := ex.Req.Header.Get("X-Realtraffic-Source")
	if src == "" {
		src = "(no source header)"
	}
	return ex.File + "#" + strconv.Itoa(ex.Index) + " " + src
}

// Dir returns the directory of the recordings of the real API, or "" and
// why there is none. It is TOOLNEXUS_REALTRAFFIC when that is set, and
// otherwise shared/realtraffic beside the repository's root: the root is
// the nearest directory above the test's that holds this module's go.mod.
// In a git worktree (a .git file that points into another repository's
// .git/worktrees), the main checkout's neighbour counts too.
func Dir() (dir, why string) {
	if d := os.Getenv(Env); d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return "", fmt.Sprintf("%s=%s is not a directory", Env, d)
		}
		return d, ""
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err.Error()
	}
	candidates := []string{filepath.Join(root, "..", "shared", "realtraffic")}
	if main := MainWorktree(root); main != "" {
		candidates = append(candidates, filepath.Join(main, "..", "shared", "realtraffic"))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			return filepath.Clean(c), ""
		}
	}
	return "", fmt.Sprintf("no recordings of the real API: %s does not exist (it sits beside the repository in CI; "+
		"set %s to a directory of *.httprr traces to run this test elsewhere)", filepath.Clean(candidates[0]), Env)
}

// Env names the variable that points the test at recordings
// elsewhere.
const Env = "TOOLNEXUS_REALTRAFFIC"

// RootModule is the module path of the repository's root.
const RootModule = "github.com/toolnexus/toolnexus-go"

// moduleRoot returns the nearest directory at or above the working
// directory whose go.mod declares [RootModule].
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			regexp.MustCompile(`(?m)^module\s+`+regexp.QuoteMeta(RootModule)+`\s*$`).Match(data) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s at or above %s", RootModule, wd)
		}
	}
}

// MainWorktree returns the main checkout of the repository whose linked
// worktree is root, or "" when root is not a linked worktree. A linked
// worktree's .git is a file "gitdir: <main>/.git/worktrees/<name>".
func MainWorktree(root string) string {
	data, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "" // a directory, or none: root is the main checkout
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	worktrees := filepath.Dir(gitdir)
	if filepath.Base(worktrees) != "worktrees" {
		return ""
	}
	return filepath.Dir(filepath.Dir(worktrees)) // <main>/.git/worktrees -> <main>
}

// Format returns an httprr trace of exchanges, each a request and its
// response as net/http writes them, counted: what [Read] reads.
func Format(exchanges ...[2]string) string {
	var b strings.Builder
	b.WriteString(Header)
	for _, e := range exchanges {
		fmt.Fprintf(&b, "%d %d\n%s%s", len(e[0]), len(e[1]), e[0], e[1])
	}
	return b.String()
}

// RequestText and ResponseText write a request to the Gemini API's path
// with a JSON body, and a response with status and body, as net/http
// writes them: the two halves of an exchange for [Format], in tests.
func RequestText(path, body string) string {
	return fmt.Sprintf("POST https://generativelanguage.googleapis.com%s HTTP/1.1\r\nHost: generativelanguage.googleapis.com\r\n"+
		"Content-Length: %d\r\nContent-Type: application/json\r\nX-Realtraffic-Source: test/repo cassette.yaml@0\r\n\r\n%s", path, len(body), body)
}

// ResponseText: see [RequestText].
func ResponseText(status int, contentType, body string) string {
	return fmt.Sprintf("HTTP/2.0 %d %s\r\nContent-Type: %s\r\n\r\n%s", status, http.StatusText(status), contentType, body)
}

// ReadFile reads the trace of that base name in dir.
func ReadFile(dir, name string) ([]Exchange, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return Read(name, data)
}
