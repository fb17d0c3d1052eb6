package fake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
)

// exchange is one request and its response, read from an httprr trace.
type exchange struct {
	file  string // the trace's base name
	index int    // its position in the trace, from 0
	req   *http.Request
	body  []byte // the request body
	resp  *http.Response
	rbody []byte // the response body
}

// httprrHeader starts every httprr trace (golang.org/x/oscar/internal/httprr).
const httprrHeader = "httprr trace v1\n"

// readHTTPRR reads the exchanges of an httprr trace: the line "httprr trace
// v1", then for each exchange a line "N M" and N bytes of HTTP request
// followed by M bytes of HTTP response, as net/http writes them.
//
// Some traces had their line ends rewritten from CRLF to LF after they were
// recorded (by a checkout with autocrlf, or an editor), so that N and M
// count bytes that are no longer there. When the counts do not fit, the
// trace is read by its structure instead: an exchange ends where the next
// one's "N M" line is followed by a request line, and a request's body is
// its Content-Length bytes.
func readHTTPRR(name string, data []byte) ([]exchange, error) {
	rest, ok := bytes.CutPrefix(data, []byte(httprrHeader))
	if !ok {
		return nil, fmt.Errorf("%s: not an httprr trace (no %q line)", name, httprrHeader[:len(httprrHeader)-1])
	}
	pairs, err := splitCounted(rest)
	if err != nil {
		var lerr error
		if pairs, lerr = splitByStructure(rest); lerr != nil {
			return nil, fmt.Errorf("%s: %v; read by structure: %v", name, err, lerr)
		}
	}
	var out []exchange
	for i, p := range pairs {
		ex, err := parseExchange(p[0], p[1])
		if err != nil {
			return nil, fmt.Errorf("%s: exchange %d: %v", name, i, err)
		}
		ex.file, ex.index = name, i
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
func parseExchange(reqBytes, respBytes []byte) (exchange, error) {
	br := bytes.NewReader(reqBytes)
	r := bufio.NewReader(br)
	req, err := http.ReadRequest(r)
	if err != nil {
		return exchange{}, fmt.Errorf("request: %v", err)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return exchange{}, fmt.Errorf("request body: %v", err)
	}
	if left := br.Len() + r.Buffered(); left > 0 {
		return exchange{}, fmt.Errorf("%d bytes after the request's body", left)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(respBytes)), req)
	if err != nil {
		return exchange{}, fmt.Errorf("response: %v", err)
	}
	rbody, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return exchange{}, fmt.Errorf("response body: %v", err)
	}
	return exchange{req: req, body: body, resp: resp, rbody: rbody}, nil
}

// String names the exchange by its source cassette and its place in the
// trace.
func (ex exchange) String() string {
	src := ex.req.Header.Get("X-Realtraffic-Source")
	if src == "" {
		src = "(no source header)"
	}
	return ex.file + "#" + strconv.Itoa(ex.index) + " " + src
}
