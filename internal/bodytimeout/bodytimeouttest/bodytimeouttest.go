// Package bodytimeouttest holds the client that the tests of
// bodytimeout's users share: one that sends part of a body and stalls.
package bodytimeouttest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Guard bounds how long Stall waits for the server: a hang guard, far
// past the deadline a test configures, not a measure of it.
const Guard = time.Minute

// Stall sends a request of method to path on the server at addr
// (host:port), with header
// (Content-Type: application/json unless it says otherwise), a body it
// announces as 64 KiB longer than body (short enough that net/http
// drains what a handler leaves unread before it answers), of which it
// sends only body, then nothing.
// It returns the server's response, its body read, once the server has
// closed the connection. It fails the test if the server has not
// answered and closed it within Guard.
func Stall(t testing.TB, addr, method, path string, header http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(Guard))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, path, addr, len(body)+64<<10)
	if header.Get("Content-Type") == "" {
		req += "Content-Type: application/json\r\n"
	}
	for k, vs := range header {
		for _, v := range vs {
			req += k + ": " + v + "\r\n"
		}
	}
	if _, err := io.WriteString(conn, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response to a stalled body within %s: %v", Guard, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the response's body: %v", err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("the server did not close the connection of a stalled body within %s: %v", Guard, err)
	}
	return resp, b
}

// isReset reports whether err is the connection reset by the server.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
