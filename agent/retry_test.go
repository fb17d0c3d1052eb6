package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"
)

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{genai.APIError{Code: 429}, true},
		{fmt.Errorf("wrapped: %w", genai.APIError{Code: 503}), true},
		{genai.APIError{Code: 408}, true},
		{genai.APIError{Code: 500}, true},
		{genai.APIError{Code: 502}, true},
		{genai.APIError{Code: 504}, true},
		{genai.APIError{Code: 400}, false},
		{genai.APIError{Code: 401}, false},
		{genai.APIError{Code: 403}, false},
		{genai.APIError{Code: 404}, false},
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("doRequest: error sending request: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
		{errStreamCut, true},
		// What can heal: timeouts, resets, dropped connections.
		{&url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}, true},
		{&url.Error{Op: "Post", URL: "https://x", Err: &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}}, true},
		{&url.Error{Op: "Post", URL: "https://x", Err: &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}}, true},
		{&url.Error{Op: "Post", URL: "https://x", Err: timeoutErr{}}, true},
		{fmt.Errorf("read: %w", net.ErrClosed), true},
		// What cannot: a name that does not exist, a refused certificate, a
		// request that cannot be made.
		{&url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "generativelanguage.gooogleapis.com", IsNotFound: true}}}, false},
		{&url.Error{Op: "Post", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, false},
		{&url.Error{Op: "Post", URL: "https://x", Err: x509.HostnameError{Host: "x"}}, false},
		{&url.Error{Op: "Post", URL: "https://x", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, false},
		{&url.Error{Op: "Post", URL: "htp://x", Err: errors.New(`unsupported protocol scheme "htp"`)}, false},
		{&url.Error{Op: "parse", URL: "http://[::1", Err: errors.New("missing ']' in host")}, false},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{errors.New("tModel: invalid model parameter"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestRetryDelay(t *testing.T) {
	info := func(d any) error {
		return genai.APIError{Code: 429, Details: []map[string]any{
			{"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
			{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": d},
		}}
	}
	for _, tc := range []struct {
		err  error
		want time.Duration
		ok   bool
	}{
		{info("37s"), 37 * time.Second, true},
		{info("1.500s"), 1500 * time.Millisecond, true},
		{info("0.000000001s"), time.Nanosecond, true},
		{info(37), 0, false},
		{info("soon"), 0, false},
		{genai.APIError{Code: 429}, 0, false},
		{errors.New("x"), 0, false},
	} {
		got, ok := retryDelay(tc.err)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryDelay(%v) = %v, %v; want %v, %v", tc.err, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRetrierDelay(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 3, InitialDelay: 10 * time.Millisecond, Jitter: -1, MaxElapsed: time.Minute}.withDefaults()
	r := retrier{policy: &p, start: time.Now()}
	if d, ok := r.delay(genai.APIError{Code: 503}, 1); !ok || d != 10*time.Millisecond {
		t.Errorf("first delay = %v, %v; want 10ms", d, ok)
	}
	if d, ok := r.delay(genai.APIError{Code: 503}, 2); !ok || d != 20*time.Millisecond {
		t.Errorf("second delay = %v, %v; want 20ms (doubled)", d, ok)
	}
	if _, ok := r.delay(genai.APIError{Code: 503}, 3); ok {
		t.Error("third failure retried despite MaxAttempts 3")
	}
	if _, ok := r.delay(genai.APIError{Code: 400}, 1); ok {
		t.Error("400 retried")
	}
	// The API's delay wins over a shorter computed one...
	withInfo := genai.APIError{Code: 429, Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}}}
	r2 := retrier{policy: &p, start: time.Now()}
	if d, ok := r2.delay(withInfo, 1); !ok || d != 2*time.Second {
		t.Errorf("delay with RetryInfo 2s = %v, %v", d, ok)
	}
	// ...but not past the policy's time budget.
	short := RetryPolicy{MaxElapsed: time.Second}.withDefaults()
	r3 := retrier{policy: &short, start: time.Now()}
	if _, ok := r3.delay(withInfo, 1); ok {
		t.Error("retried with a 2s RetryInfo delay past a 1s MaxElapsed")
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	got := RetryPolicy{}.withDefaults()
	want := RetryPolicy{MaxAttempts: 4, InitialDelay: time.Second, MaxDelay: 30 * time.Second, Multiplier: 2, Jitter: 0.2, MaxElapsed: 2 * time.Minute, MaxReasks: 2,
		FlexMaxAttempts: 10, FlexMaxElapsed: 15 * time.Minute}
	if got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	off := RetryPolicy{Jitter: -1, MaxReasks: -1}.withDefaults()
	if off.Jitter != 0 || off.MaxReasks != 0 {
		t.Errorf("negative Jitter/MaxReasks = %v/%v, want 0/0", off.Jitter, off.MaxReasks)
	}
}
