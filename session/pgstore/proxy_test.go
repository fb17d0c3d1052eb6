package pgstore_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// A proxy stands between the store and the server, on loopback, and
// forwards the PostgreSQL protocol both ways, until the client sends the
// message its fault is waiting for: then it fails the connection there,
// once. It reads the protocol only as far as framing messages.
type proxy struct {
	ln       net.Listener
	upstream string
	fault    fault
	match    func(typ byte, body []byte) bool
	fired    atomic.Bool
	thenDown atomic.Bool // once the fault fired, refuse connections
	conns    atomic.Int32
	mu       sync.Mutex
	open     []net.Conn
	wg       sync.WaitGroup
}

// How a proxy fails a connection when its fault's message comes.
type fault int

const (
	// cutBefore closes both connections without forwarding the message.
	cutBefore fault = iota
	// cutAfter closes the client's connection, then forwards the message
	// to the server and closes that connection: the server acts on the
	// message, and the client never hears its answer.
	cutAfter
	// partition closes the client's connection without forwarding the
	// message, and leaves the server's open and silent, as a network
	// partition would: the server does not learn that the client is gone.
	partition
	// fatalAfter forwards the message to the server and answers the client
	// in its place, with a FATAL error that ends the session (57P01, as
	// pg_terminate_backend does), whatever the server did.
	fatalAfter
)

// newProxy starts a proxy to the server of the URL u and returns it with
// u pointed at it. It stops when t ends.
func newProxy(t *testing.T, u string, f fault, match func(typ byte, body []byte) bool) (*proxy, string) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: parsed.Host, fault: f, match: match}
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	parsed.Host = ln.Addr().String()
	return p, parsed.String()
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *proxy) track(c net.Conn) {
	p.mu.Lock()
	p.open = append(p.open, c)
	p.mu.Unlock()
}

func (p *proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		server, err := net.Dial("tcp", p.upstream)
		if err != nil {
			client.Close()
			continue
		}
		p.track(client)
		p.track(server)
		muted := new(atomic.Bool) // the server's answers no longer reach the client
		p.wg.Go(func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := server.Read(buf)
				if n > 0 && !muted.Load() {
					if _, err := client.Write(buf[:n]); err != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			client.Close()
		})
		p.wg.Go(func() { p.forward(client, server, muted) })
	}
}

// forward copies the client's messages to the server, and applies the
// fault to the one it is waiting for.
func (p *proxy) forward(client, server net.Conn, muted *atomic.Bool) {
	defer client.Close()
	// The startup message: a length, then the rest, with no type byte.
	var n [4]byte
	if _, err := io.ReadFull(client, n[:]); err != nil {
		server.Close()
		return
	}
	startup := make([]byte, binary.BigEndian.Uint32(n[:])-4)
	if _, err := io.ReadFull(client, startup); err != nil || write(server, n[:], startup) != nil {
		server.Close()
		return
	}
	for {
		var head [5]byte
		if _, err := io.ReadFull(client, head[:]); err != nil {
			server.Close()
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(client, body); err != nil {
			server.Close()
			return
		}
		if p.match(head[0], body) && p.fired.CompareAndSwap(false, true) {
			if p.thenDown.Load() {
				p.ln.Close()
			}
			if p.fault == fatalAfter {
				muted.Store(true)
				write(server, head[:], body)
				write(client, fatal)
				client.Close()
				return
			}
			client.Close()
			switch p.fault {
			case cutBefore:
				server.Close()
			case cutAfter:
				write(server, head[:], body)
				server.Close()
			case partition: // the server's connection stays open until the proxy closes
			}
			return
		}
		if write(server, head[:], body) != nil {
			return
		}
	}
}

// fatal is the ErrorResponse of a session the server ends.
var fatal = func() []byte {
	var fields []byte
	for _, f := range []string{"SFATAL", "VFATAL", "C57P01", "Mterminating connection due to administrator command"} {
		fields = append(append(fields, f...), 0)
	}
	fields = append(fields, 0)
	return append(binary.BigEndian.AppendUint32([]byte{'E'}, uint32(4+len(fields))), fields...)
}()

func write(c net.Conn, parts ...[]byte) error {
	_, err := c.Write(bytes.Join(parts, nil))
	return err
}

// query matches a simple query ('Q') that starts with text.
func query(text string) func(byte, []byte) bool {
	return func(typ byte, body []byte) bool { return typ == 'Q' && bytes.HasPrefix(body, []byte(text)) }
}

// parse matches the parsing ('P') of a statement that holds text.
func parse(text string) func(byte, []byte) bool {
	return func(typ byte, body []byte) bool { return typ == 'P' && bytes.Contains(body, []byte(text)) }
}
