package geminilive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"
)

// A tunnel carries the connections of a session to the Live API, so that
// opening one honours a context. genai's Live.Connect takes a context but
// does not use it (google.golang.org/genai v1.77.0 live.go:56-174; the
// same in v1.79.1): it dials with websocket.DefaultDialer and waits for
// setupComplete with no deadline, and the connection is out of reach
// until Connect returns. So the session's Live client dials the tunnel,
// on loopback, and the tunnel opens the connection to the service in its
// place, with the context, then copies the bytes both ways unchanged: the
// websocket's frames, pings and close frames, as genai and the service
// write them. Until the setup completes, the end of the context closes
// both connections, which makes Connect return. Everything else (the
// setup, the messages, their conversion for each backend) stays genai's.
type tunnel struct {
	live   *genai.Live // a client configured as the caller's, whose base URL is the tunnel
	ln     net.Listener
	prefix string // "/" and a random token: every path genai asks for starts with it; another local process cannot guess it
	scheme string // the service's: https for wss, http for ws
	host   string

	mu      sync.Mutex
	attempt *attempt           // the dial in progress
	open    map[io.Closer]bool // the tunnel's connections, both sides, which close closes
	closed  bool
	wg      sync.WaitGroup // the accept loop and each connection's goroutines
}

// tunnelTransport opens the connections to the service: through the
// proxy the environment names, as genai's websocket.DefaultDialer does,
// in HTTP/1.1 (a websocket handshake), sending the handshake as genai
// wrote it.
var tunnelTransport = &http.Transport{
	Proxy:              http.ProxyFromEnvironment,
	DisableKeepAlives:  true,
	DisableCompression: true,
	TLSNextProto:       map[string]func(string, *tls.Conn) http.RoundTripper{},
}

// newTunnel returns a tunnel to the Live API client serves.
func newTunnel(client *genai.Client) (*tunnel, error) {
	cc := client.ClientConfig()
	base, err := url.Parse(cc.HTTPOptions.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("the client's base URL: %w", err)
	}
	t := &tunnel{prefix: "/" + rand.Text(), scheme: "https", host: base.Host, open: map[io.Closer]bool{}}
	if base.Scheme == "ws" { // genai dials wss unless the base URL says ws or wss (live.go:68-72)
		t.scheme = "http"
	}
	if t.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		if t.ln, err = net.Listen("tcp", "[::1]:0"); err != nil {
			return nil, fmt.Errorf("tunnel: %w", err)
		}
	}
	cc.HTTPOptions.BaseURL = (&url.URL{Scheme: "ws", Host: t.ln.Addr().String(), Path: t.prefix + base.Path}).String()
	if cc.Backend != genai.BackendVertexAI {
		// The Live API of the Gemini API reads none of them, and
		// genai.NewClient refuses them there when the first client
		// filled them in from the environment.
		cc.Credentials, cc.Project, cc.Location = nil, "", ""
	}
	c, err := genai.NewClient(context.Background(), &cc)
	if err != nil {
		t.ln.Close()
		return nil, fmt.Errorf("tunnel: %w", err)
	}
	t.live = c.Live
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// attempt is a dial in progress: its context, the connections it binds
// to it until the setup completes, and why the service refused it.
type attempt struct {
	ctx   context.Context
	mu    sync.Mutex
	stops []func() bool
	err   error
}

// bind closes c if the attempt's context ends before the setup
// completes.
func (a *attempt) bind(c io.Closer) {
	stop := context.AfterFunc(a.ctx, func() { c.Close() })
	a.mu.Lock()
	a.stops = append(a.stops, stop)
	a.mu.Unlock()
}

// settle frees the connections from the attempt's context once the setup
// completed; false when the context ended first, closing them.
func (a *attempt) settle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := a.ctx.Err() == nil
	for _, stop := range a.stops {
		ok = stop() && ok
	}
	a.stops = nil
	return ok
}

// refused records why the service did not take the connection.
func (a *attempt) refused(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.mu.Unlock()
}

// dial opens a connection with setup as genai's Live.Connect does, but
// gives up when ctx ends or timeout passes before the service completed
// the setup. It returns the error of ctx (its cause), the service's
// refusal of the websocket handshake, or Connect's error. One dial at a
// time.
func (t *tunnel) dial(ctx context.Context, model string, setup *genai.LiveConnectConfig, timeout time.Duration) (*genai.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := &attempt{ctx: ctx}
	t.mu.Lock()
	t.attempt = a
	t.mu.Unlock()
	conn, err := t.live.Connect(ctx, model, setup)
	t.mu.Lock()
	t.attempt = nil
	t.mu.Unlock()
	if err == nil && a.settle() {
		return conn, nil
	}
	if conn != nil {
		conn.Close()
	}
	a.mu.Lock()
	refused := a.err
	a.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the setup did not complete: %w", context.Cause(ctx))
	case refused != nil:
		return nil, refused
	}
	return nil, err
}

// accept takes genai's connections to the tunnel until it is closed.
func (t *tunnel) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil { // out of file descriptors, say
			time.Sleep(10 * time.Millisecond)
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.open[c] = true
		t.wg.Add(1)
		t.mu.Unlock()
		go t.carry(c)
	}
}

// hold adds c to the connections close closes; false (c closed) once the
// tunnel is closed.
func (t *tunnel) hold(c io.Closer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		c.Close()
		return false
	}
	t.open[c] = true
	return true
}

// drop closes c and forgets it.
func (t *tunnel) drop(c io.Closer) {
	t.mu.Lock()
	delete(t.open, c)
	t.mu.Unlock()
	c.Close()
}

// carry serves a connection genai made to the tunnel: it opens the
// connection to the service for the dial in progress, with the
// handshake genai sent, answers genai with the service's answer, then
// copies between the two until either ends.
func (t *tunnel) carry(c net.Conn) {
	defer t.wg.Done()
	defer t.drop(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // genai writes its handshake at once
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	t.mu.Lock()
	a := t.attempt
	t.mu.Unlock()
	rest, ok := strings.CutPrefix(req.URL.Path, t.prefix)
	if !ok || a == nil || req.Method != http.MethodGet || rest != "" && rest[0] != '/' {
		io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	a.bind(c)
	service := &url.URL{Scheme: t.scheme, Host: t.host, Path: rest}
	shown := *service // as genai would name it
	shown.Scheme = map[string]string{"https": "wss", "http": "ws"}[t.scheme]
	out, err := http.NewRequestWithContext(a.ctx, http.MethodGet, service.String(), nil)
	if err != nil {
		a.refused(err)
		return
	}
	out.Header = req.Header // Upgrade, Sec-WebSocket-Key… and the credentials
	resp, err := tunnelTransport.RoundTrip(out)
	if err != nil {
		a.refused(fmt.Errorf("connect to %s: %w", shown.Redacted(), err))
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		a.refused(fmt.Errorf("connect to %s: the service answered %s", shown.Redacted(), resp.Status))
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body, resp.ContentLength, resp.TransferEncoding, resp.Close = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil, true
		resp.Write(c)
		return
	}
	up, ok := resp.Body.(io.ReadWriteCloser)
	if !ok || !t.hold(up) {
		resp.Body.Close()
		return
	}
	defer t.drop(up)
	a.bind(up)
	// The service's answer as it wrote it: genai checks its
	// Sec-WebSocket-Accept against the key it sent, which the service saw.
	var head bytes.Buffer
	fmt.Fprintf(&head, "HTTP/1.1 %s\r\n", resp.Status)
	resp.Header.Write(&head)
	head.WriteString("\r\n")
	if _, err := c.Write(head.Bytes()); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyBytes(up, br) // what genai sent after its handshake is in br
		up.Close()
		c.Close()
	}()
	copyBytes(c, up)
	c.Close()
	up.Close()
	<-done
}

// copyBytes copies src to dst until either fails, through a buffer of 8
// KiB, which holds a message of 100 ms of audio either way (io.Copy's fast
// paths would take 32 KiB each way, for each session).
func copyBytes(dst io.Writer, src io.Reader) {
	io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 8<<10))
}

// close closes the tunnel's connections and waits for its goroutines.
func (t *tunnel) close() {
	t.mu.Lock()
	t.closed = true
	for c := range t.open {
		c.Close()
	}
	t.mu.Unlock()
	t.ln.Close()
	t.wg.Wait()
}
