package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/genai"
)

// RetryPolicy says how a failed model call is retried. The zero value is a
// sensible policy: every zero field takes the default named in its comment.
//
// A call is retried when it failed for a transient reason: HTTP 408, 429,
// 500, 502, 503 or 504, a network timeout, a refused, reset or dropped
// connection, or a reply cut before its end (a stream cut before its first
// event, a body that is not whole JSON). It is never retried on 400, 401,
// 403 or 404, on what no wait can mend (a host name that does not exist, a
// TLS certificate the client refuses, a malformed URL or unsupported
// scheme), nor once the run's context is done. Waits grow exponentially with jitter, and when the
// API says how long to wait (google.rpc.RetryInfo in the error's details) a
// wait is at least that long. Every wait ends early when the context is
// done.
type RetryPolicy struct {
	// MaxAttempts bounds the model calls made for one turn, the first
	// included. Zero means 4; 1 turns retries off.
	MaxAttempts int

	// InitialDelay is the wait before the first retry. Zero means 1s.
	InitialDelay time.Duration

	// MaxDelay caps each computed wait (not the API's RetryInfo delay).
	// Zero means 30s.
	MaxDelay time.Duration

	// Multiplier grows the wait after each retry. Zero means 2.
	Multiplier float64

	// Jitter randomizes each computed wait by ±Jitter of itself. Zero means
	// 0.2; a negative value turns jitter off.
	Jitter float64

	// MaxElapsed bounds the time spent on one turn's model calls, waits
	// included: a retry whose wait would overrun it is not made. Zero means
	// 2 minutes; a negative value means no bound.
	MaxElapsed time.Duration

	// MaxReasks bounds how many times a turn is asked again after an empty
	// reply (no candidate, or a candidate with no parts) or a
	// MALFORMED_FUNCTION_CALL finish, or an UNEXPECTED_TOOL_CALL one that
	// holds no call. Zero means 2; a negative value turns re-asking off.
	MaxReasks int

	// FlexMaxAttempts and FlexMaxElapsed replace MaxAttempts and
	// MaxElapsed for a request of the flex tier (GenerateConfig.ServiceTier
	// "flex") that the API sheds: one answered 429 or 503. Flex requests
	// cost half as much, in exchange for the API serving them when it can
	// (its latency target is minutes), so that a shed one is worth waiting
	// for longer than a standard one. Zero means 10 attempts and 15
	// minutes; neither ever lowers MaxAttempts or MaxElapsed. That the API
	// sheds flex requests with 429 RESOURCE_EXHAUSTED or 503 UNAVAILABLE is
	// assumed: it documents no error of its own for them.
	FlexMaxAttempts int
	FlexMaxElapsed  time.Duration
}

// withDefaults returns p with every zero field set to its default.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.InitialDelay <= 0 {
		p.InitialDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.Multiplier <= 0 {
		p.Multiplier = 2
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = 0.2
	case p.Jitter < 0:
		p.Jitter = 0
	case p.Jitter > 1:
		p.Jitter = 1
	}
	if p.MaxElapsed == 0 {
		p.MaxElapsed = 2 * time.Minute
	}
	switch {
	case p.MaxReasks == 0:
		p.MaxReasks = 2
	case p.MaxReasks < 0:
		p.MaxReasks = 0
	}
	if p.FlexMaxAttempts <= 0 {
		p.FlexMaxAttempts = 10
	}
	if p.FlexMaxElapsed == 0 {
		p.FlexMaxElapsed = 15 * time.Minute
	}
	return p
}

// retrier decides and waits out the retries of one turn. The backoff state
// is made on the first failure only, so a turn that succeeds at once
// allocates nothing for it.
type retrier struct {
	policy  *RetryPolicy
	start   time.Time
	flex    bool // the requests ask for the flex tier
	backoff *backoff.ExponentialBackOff
}

// delay returns how long to wait before retrying after err, and false when
// err must not be retried (or the policy's time is up). attempt is the call
// that failed, from 1.
func (r *retrier) delay(err error, attempt int) (time.Duration, bool) {
	maxAttempts, maxElapsed := r.policy.MaxAttempts, r.policy.MaxElapsed
	if r.flex && shed(err) {
		maxAttempts = max(maxAttempts, r.policy.FlexMaxAttempts)
		if maxElapsed > 0 {
			maxElapsed = max(maxElapsed, r.policy.FlexMaxElapsed)
		}
	}
	if attempt >= maxAttempts || !transient(err) {
		return 0, false
	}
	if r.backoff == nil {
		r.backoff = backoff.NewExponentialBackOff(
			backoff.WithInitialInterval(r.policy.InitialDelay),
			backoff.WithMaxInterval(r.policy.MaxDelay),
			backoff.WithMultiplier(r.policy.Multiplier),
			backoff.WithRandomizationFactor(r.policy.Jitter),
			backoff.WithMaxElapsedTime(0), // bounded below, from the turn's start
		)
	}
	d := r.backoff.NextBackOff()
	if server, ok := retryDelay(err); ok && server > d {
		d = server
	}
	if maxElapsed > 0 && time.Since(r.start)+d > maxElapsed {
		return 0, false
	}
	return d, true
}

// shed reports whether err is how the API sheds a request it cannot serve
// now: 429 or 503 (assumed for the flex tier; see RetryPolicy.FlexMaxAttempts).
func shed(err error) bool {
	var apiErr genai.APIError
	return errors.As(err, &apiErr) && (apiErr.Code == 429 || apiErr.Code == 503)
}

// sleep waits for d or until ctx is done, and reports whether it waited the
// whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryableStatus lists the HTTP statuses worth another try.
var retryableStatus = []int{408, 429, 500, 502, 503, 504}

// transient reports whether err is worth retrying: a retryable API status,
// a network failure that can heal (a timeout, a connection refused, reset or
// dropped, a reply cut short), or a reply that arrived garbled (a body that
// is not whole JSON, a functionCall whose args are not an object, a thought
// signature that is not base64: the SDK cannot decode the reply, and asking
// again is the only remedy). What cannot heal fails at once: a host name
// that does not exist, a TLS certificate the client refuses, a request the
// client cannot even make (a malformed URL, an unsupported scheme), and any
// error the loop does not recognize.
func transient(err error) bool {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return slices.Contains(retryableStatus, apiErr.Code)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || permanent(err) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, errStreamCut) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var (
		netErr    net.Error
		dnsErr    *net.DNSError
		opErr     *net.OpError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		b64Err    base64.CorruptInputError
	)
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	// A name lookup or a network operation that failed for another reason:
	// a DNS server that did not answer, a connection that broke in a way
	// the errors above do not name. Failures that cannot heal were ruled
	// out first.
	return errors.As(err, &dnsErr) || errors.As(err, &opErr) || errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || errors.As(err, &b64Err)
}

// permanent reports whether err is a network failure that cannot heal by
// itself: a DNS name that does not exist, a certificate the client refuses,
// a server that does not speak TLS, a URL that does not parse.
func permanent(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsNotFound
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
		record           tls.RecordHeaderError
		urlErr           *url.Error
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verification) || errors.As(err, &record) {
		return true
	}
	return errors.As(err, &urlErr) && urlErr.Op == "parse"
}

// retryDelay returns the wait the API asked for in a google.rpc.RetryInfo
// detail of err, if any.
func retryDelay(err error) (time.Duration, bool) {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0, false
	}
	for _, detail := range apiErr.Details {
		if detail["@type"] != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		s, ok := detail["retryDelay"].(string)
		if !ok {
			continue
		}
		// A protobuf Duration in JSON: seconds with up to 9 decimals and
		// an "s" suffix, such as "37s" or "1.500s": ParseDuration reads it.
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d, true
		}
	}
	return 0, false
}
