package a2aagent

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/cenkalti/backoff/v4"
	"github.com/toolnexus/toolnexus-go/agentserver"
)

// PushOptions configure push notifications (see the package doc, Push
// notifications). The zero value serves them with the defaults below,
// to public addresses only.
type PushOptions struct {
	// Disabled turns push notifications off: the card says so, and every
	// push notification method is refused (-32003).
	Disabled bool

	// AllowPrivateNetworks lets webhooks be at loopback, private (10/8,
	// 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, a cloud's
	// metadata server among them), shared (100.64/10), unspecified and
	// multicast addresses, which are refused otherwise, when a config is
	// set and again when each notification is sent: a webhook could
	// otherwise make the agent reach the services of its own network.
	// Set it for tests and for receivers in a network every user is
	// trusted with.
	AllowPrivateNetworks bool

	// Timeout bounds each attempt to deliver a notification, the
	// connection included. Zero means DefaultPushTimeout.
	Timeout time.Duration

	// Retries is how many more times a notification that failed (no
	// answer, or a 5xx or 429 one) is sent, after RetryDelay, then
	// twice as long each time. Zero means DefaultPushRetries; less than
	// zero, none. Zero RetryDelay means DefaultPushRetryDelay.
	Retries    int
	RetryDelay time.Duration

	// MaxPerTask and MaxPerUser bound the configs a task, and a user's
	// tasks together, hold. Zero means DefaultMaxPushConfigsPerTask and
	// DefaultMaxPushConfigsPerUser.
	MaxPerTask, MaxPerUser int
}

// The defaults of PushOptions.
const (
	DefaultPushTimeout           = 10 * time.Second
	DefaultPushRetries           = 3
	DefaultPushRetryDelay        = time.Second
	DefaultMaxPushConfigsPerTask = 10
	DefaultMaxPushConfigsPerUser = 100
)

// Limits on what a push notification config holds.
const (
	maxPushURL         = 2048
	maxPushID          = 256
	maxPushToken       = 1024
	maxPushCredentials = 4096
)

// errBlockedAddress is the error of a webhook at an address that
// PushOptions.AllowPrivateNetworks does not allow.
var errBlockedAddress = errors.New("a private, loopback or link-local address, which this agent does not send push notifications to")

// A pushConfig is a webhook of one task of one user.
type pushConfig struct {
	task, id, url, token string
	scheme, credentials  string // the Authorization header's, when credentials is not empty
	v1                   bool   // set over 1.0: notified in 1.0's shape
	// from is the length of the task's log when the config was set:
	// the task as it stood then is its first notification. 0 for a
	// config a message set: every state of its task is notified.
	from int64

	cancel context.CancelFunc // stops its watcher
	ended  time.Time          // when its watcher ended (pusher.mu)
}

// pusher keeps the push notification configs of a handler's tasks, and
// sends each config's notifications from a goroutine of its own, which
// reads the task's log.
type pusher struct {
	s      *agentserver.Server
	base   *url.URL // the card's url, for the links of large files
	opts   PushOptions
	client *http.Client
	logger *slog.Logger
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)

	mu    sync.Mutex
	users map[string][]*pushConfig // by user, in the order they were set
}

// lookupHost resolves a webhook's host; tests replace it.
var lookupHost = func(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func newPusher(s *agentserver.Server, opts PushOptions, logger *slog.Logger) *pusher {
	opts.Timeout = cmp.Or(opts.Timeout, DefaultPushTimeout)
	opts.Retries = cmp.Or(opts.Retries, DefaultPushRetries)
	opts.RetryDelay = cmp.Or(opts.RetryDelay, DefaultPushRetryDelay)
	opts.MaxPerTask = cmp.Or(opts.MaxPerTask, DefaultMaxPushConfigsPerTask)
	opts.MaxPerUser = cmp.Or(opts.MaxPerUser, DefaultMaxPushConfigsPerUser)
	d := &net.Dialer{Timeout: opts.Timeout}
	if !opts.AllowPrivateNetworks {
		// The address dialed is checked, whatever the name resolved to
		// when the config was set: a name that resolves elsewhere since
		// (DNS rebinding) is refused here.
		d.Control = checkDial
	}
	client := &http.Client{
		// No proxy (the address checked is the one dialed), no kept
		// connections (notifications are few; none outlives its
		// delivery), no redirects (a redirect is a failure: the webhook
		// is the URL the user set).
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true,
			TLSHandshakeTimeout: opts.Timeout, ResponseHeaderTimeout: opts.Timeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &pusher{s: s, opts: opts, client: client, logger: logger, lookup: lookupHost, users: map[string][]*pushConfig{}}
}

// checkDial is the Control of the dialer of webhooks: it refuses an
// address that blocked refuses, as it is dialed.
func checkDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, errBlockedAddress)
	}
	if b, ok := blocked(ap.Addr()); ok {
		return fmt.Errorf("%s: %w", b, errBlockedAddress)
	}
	return nil
}

// blocked reports whether a webhook at a may not be notified unless
// PushOptions.AllowPrivateNetworks says so, and the address that says
// so: a itself, or the IPv4 address a embeds. An IPv6 address reaches the
// IPv4 address it embeds through a translator or a tunnel (an IPv6-only
// host behind NAT64 reaches 169.254.169.254 at 64:ff9b::a9fe:a9fe), so it
// is refused for what it embeds: IPv4-mapped (::ffff:0:0/96) and
// IPv4-compatible (::/96, RFC 4291), NAT64's well-known prefix
// (64:ff9b::/96, RFC 6052), 6to4 (2002::/16, RFC 3056), Teredo (2001::/32,
// RFC 4380: its server, and its client, whose address is stored
// inverted) and ISATAP interface identifiers (RFC 5214). NAT64's prefix
// for local use (64:ff9b:1::/48, RFC 8215) places the IPv4 address where
// each network says, and is not globally reachable: it is refused whole,
// as are site-local addresses (fec0::/10, deprecated, still routed in
// some networks).
func blocked(a netip.Addr) (netip.Addr, bool) {
	a = a.Unmap()
	if blockedAddr(a) {
		return a, true
	}
	if !a.Is6() {
		return a, false
	}
	if localNAT64.Contains(a) || siteLocal.Contains(a) {
		return a, true
	}
	for _, v4 := range embeddedIPv4(a) {
		if blockedAddr(v4) {
			return v4, true
		}
	}
	return a, false
}

// blockedAddr reports whether a, itself, is an address webhooks are
// refused at: loopback, private, link-local, multicast, unspecified,
// carrier-grade NAT's or this network's.
func blockedAddr(a netip.Addr) bool {
	return !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || sharedSpace.Contains(a) || thisNetwork.Contains(a)
}

// embeddedIPv4 returns the IPv4 addresses the IPv6 address a embeds (see
// blocked).
func embeddedIPv4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
	var out []netip.Addr
	switch {
	case compatible.Contains(a), wellKnownNAT64.Contains(a):
		out = append(out, v4(12))
	case sixToFour.Contains(a):
		out = append(out, v4(2))
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		out = append(out, v4(4), netip.AddrFrom4(client))
	}
	// ISATAP: an interface identifier of 0000:5efe or 0200:5efe (the
	// universal/local bit set) and the IPv4 address, under any prefix.
	if (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		out = append(out, v4(12))
	}
	return out
}

// sharedSpace is RFC 6598's carrier-grade NAT space, private too, and
// thisNetwork is 0/8, which some systems dial as this host. The IPv6
// prefixes are those blocked checks.
var (
	sharedSpace    = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork    = netip.MustParsePrefix("0.0.0.0/8")
	compatible     = netip.MustParsePrefix("::/96")
	wellKnownNAT64 = netip.MustParsePrefix("64:ff9b::/96")
	localNAT64     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	siteLocal      = netip.MustParsePrefix("fec0::/10")
)

// errPushDisabled is the error of every push notification method when
// PushOptions.Disabled is set.
func errPushDisabled() error {
	return newRPCError(codePushNotSupported, "push notifications are not supported: stream the task, or poll it with tasks/get")
}

// pushFromV0 reads a 0.3 config of task: its id is the task's when it has
// none, as 0.3's SDKs do.
func pushFromV0(task a2a.TaskID, c *a2a.PushConfig) (*pushConfig, error) {
	pc := &pushConfig{task: string(task), id: c.ID, url: c.URL, token: c.Token}
	if pc.id == "" {
		pc.id = string(task)
	}
	if c.Auth != nil {
		if c.Auth.Credentials != "" && len(c.Auth.Schemes) == 0 {
			return nil, invalidParams("push notification config: authentication has credentials but no schemes: name Bearer or Basic")
		}
		for _, s := range c.Auth.Schemes {
			if authScheme(s) != "" {
				pc.scheme = authScheme(s)
				break
			}
		}
		if len(c.Auth.Schemes) > 0 && pc.scheme == "" {
			return nil, invalidParams("push notification config: authentication schemes %q: this agent speaks Bearer and Basic", c.Auth.Schemes)
		}
		pc.credentials = c.Auth.Credentials
	}
	return pc, nil
}

// pushFromV1 reads a 1.0 config: an id is made when it has none, as
// a2a-go/v2 does.
func pushFromV1(c *a2av1.PushConfig) (*pushConfig, error) {
	pc := &pushConfig{task: string(c.TaskID), id: c.ID, url: c.URL, token: c.Token, v1: true}
	if pc.id == "" {
		var b [16]byte
		rand.Read(b[:])
		pc.id = hex.EncodeToString(b[:])
	}
	if c.Auth != nil {
		if pc.scheme = authScheme(c.Auth.Scheme); pc.scheme == "" {
			return nil, invalidParams("push notification config: authentication scheme %q: this agent speaks Bearer and Basic", c.Auth.Scheme)
		}
		pc.credentials = c.Auth.Credentials
	}
	return pc, nil
}

// authScheme is the scheme of an Authorization header, as a config names
// it, or "" for one this agent does not speak.
func authScheme(s string) string {
	switch strings.ToLower(s) {
	case "bearer":
		return "Bearer"
	case "basic":
		return "Basic"
	}
	return ""
}

func (c *pushConfig) auth() (schemes []string, scheme string) {
	if c.scheme == "" {
		return nil, ""
	}
	return []string{c.scheme}, c.scheme
}

// v0 is c as 0.3 says it.
func (c *pushConfig) v0() *a2a.TaskPushConfig {
	out := &a2a.TaskPushConfig{TaskID: a2a.TaskID(c.task), Config: a2a.PushConfig{ID: c.id, URL: c.url, Token: c.token}}
	if schemes, _ := c.auth(); schemes != nil {
		out.Config.Auth = &a2a.PushAuthInfo{Schemes: schemes, Credentials: c.credentials}
	}
	return out
}

// v1c is c as 1.0 says it.
func (c *pushConfig) v1c() *a2av1.PushConfig {
	out := &a2av1.PushConfig{TaskID: a2av1.TaskID(c.task), ID: c.id, URL: c.url, Token: c.token}
	if _, scheme := c.auth(); scheme != "" {
		out.Auth = &a2av1.PushAuthInfo{Scheme: scheme, Credentials: c.credentials}
	}
	return out
}

// check validates c, and the addresses its URL's host resolves to.
func (p *pusher) check(ctx context.Context, c *pushConfig) error {
	switch {
	case c.url == "":
		return invalidParams("push notification config: url is missing")
	case len(c.url) > maxPushURL:
		return invalidParams("push notification config: url is longer than %d bytes", maxPushURL)
	case len(c.id) > maxPushID:
		return invalidParams("push notification config: id is longer than %d bytes", maxPushID)
	case len(c.token) > maxPushToken:
		return invalidParams("push notification config: token is longer than %d bytes", maxPushToken)
	case len(c.credentials) > maxPushCredentials:
		return invalidParams("push notification config: authentication.credentials are longer than %d bytes", maxPushCredentials)
	case c.scheme != "" && c.credentials == "":
		return invalidParams("push notification config: authentication names %s but has no credentials", c.scheme)
	case strings.ContainsAny(c.token+c.credentials, "\r\n\x00"):
		return invalidParams("push notification config: token and credentials are sent as HTTP headers: no line breaks")
	}
	u, err := url.Parse(c.url)
	switch {
	case err != nil:
		return invalidParams("push notification config: url %q: %v", c.url, err)
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.Hostname() == "":
		return invalidParams("push notification config: url %q is not an absolute http or https URL", c.url)
	case u.User != nil:
		return invalidParams("push notification config: url %q holds credentials: send them in authentication", c.url)
	}
	if p.opts.AllowPrivateNetworks {
		return nil
	}
	host := u.Hostname()
	addrs := []netip.Addr{}
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, a)
	} else {
		lctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
		defer cancel()
		if addrs, err = p.lookup(lctx, host); err != nil || len(addrs) == 0 {
			return invalidParams("push notification config: the host of url %q does not resolve", c.url)
		}
	}
	for _, a := range addrs {
		if b, ok := blocked(a); ok {
			what := b.String()
			if b != a.Unmap() {
				what = fmt.Sprintf("%s (which embeds %s)", a, b)
			}
			return invalidParams("push notification config: url %q: %s is %v", c.url, what, errBlockedAddress)
		}
	}
	return nil
}

// owned fails with task not found unless task is user's.
func (p *pusher) owned(ctx context.Context, user, task string) (agentserver.RunInfo, error) {
	if task == "" {
		return agentserver.RunInfo{}, invalidParams("params: the task's id is missing")
	}
	if p.opts.Disabled {
		return agentserver.RunInfo{}, errPushDisabled()
	}
	info, err := p.s.Run(ctx, user, task)
	return info, taskNotFound(a2a.TaskID(task), err)
}

// prepare checks a config that a message sets for the task it starts,
// before the message takes effect.
func (p *pusher) prepare(ctx context.Context, user string, c *pushConfig) error {
	if p.opts.Disabled {
		return errPushDisabled()
	}
	if err := p.check(ctx, c); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.roomFor(user, c)
}

// set sets c, a config of one of user's tasks, replacing the config of
// the same id, and starts its notifications.
func (p *pusher) set(ctx context.Context, user string, c *pushConfig) (*pushConfig, error) {
	info, err := p.owned(ctx, user, c.task)
	if err != nil {
		return nil, err
	}
	c.from = info.Len
	return c, p.add(ctx, user, c)
}

// add sets c, of a task that is user's.
func (p *pusher) add(ctx context.Context, user string, c *pushConfig) error {
	if err := p.check(ctx, c); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.roomFor(user, c); err != nil {
		return err
	}
	cs := p.users[user]
	if i := p.index(user, c.task, c.id); i >= 0 {
		cs[i].cancel()
		cs = append(cs[:i], cs[i+1:]...)
	}
	wctx, cancel := context.WithCancel(serverContext{context.Background(), p.s.Done()})
	c.cancel = cancel
	p.users[user] = append(cs, c)
	go p.watch(wctx, user, c)
	return nil
}

// roomFor fails when user's configs, or those of c's task, are as many
// as the options allow, c's own aside. Configs whose notifications
// ended longer than the server keeps finished runs ago are let go first.
func (p *pusher) roomFor(user string, c *pushConfig) error {
	keep := p.s.Config().KeepFinished
	cs := p.users[user][:0]
	for _, o := range p.users[user] {
		if o.ended.IsZero() || time.Since(o.ended) < keep {
			cs = append(cs, o)
		}
	}
	p.users[user] = cs
	if len(cs) == 0 {
		delete(p.users, user)
	}
	perTask := 0
	for _, o := range cs {
		if o.task == c.task && o.id == c.id {
			return nil // replaced
		}
		if o.task == c.task {
			perTask++
		}
	}
	switch {
	case perTask >= p.opts.MaxPerTask:
		return invalidParams("task %s has %d push notification configs, as many as this agent keeps for a task: delete one first", c.task, perTask)
	case len(cs) >= p.opts.MaxPerUser:
		return invalidParams("your tasks have %d push notification configs, as many as this agent keeps for a user: delete one first", len(cs))
	}
	return nil
}

// index is the index of the config id of task among user's, or -1.
func (p *pusher) index(user, task, id string) int {
	for i, c := range p.users[user] {
		if c.task == task && c.id == id {
			return i
		}
	}
	return -1
}

// get returns the config id of user's task.
func (p *pusher) get(ctx context.Context, user, task, id string) (*pushConfig, error) {
	if _, err := p.owned(ctx, user, task); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := p.index(user, task, id); i >= 0 {
		return p.users[user][i], nil
	}
	return nil, invalidParams("task %s has no push notification config %q", task, id)
}

// list returns the configs of user's task, in the order they were set.
func (p *pusher) list(ctx context.Context, user, task string) ([]*pushConfig, error) {
	if _, err := p.owned(ctx, user, task); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pushConfig
	for _, c := range p.users[user] {
		if c.task == task {
			out = append(out, c)
		}
	}
	return out, nil
}

// delete deletes the config id of user's task, and stops its
// notifications; a config that is not there is deleted already.
func (p *pusher) delete(ctx context.Context, user, task, id string) error {
	if _, err := p.owned(ctx, user, task); err != nil {
		return err
	}
	if id == "" {
		return invalidParams("params: the push notification config's id is missing")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := p.index(user, task, id); i >= 0 {
		cs := p.users[user]
		cs[i].cancel()
		p.users[user] = append(cs[:i], cs[i+1:]...)
	}
	return nil
}

// serverContext is done when the server closes.
type serverContext struct {
	context.Context
	done <-chan struct{}
}

func (c serverContext) Done() <-chan struct{} { return c.done }

func (c serverContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// watch sends c's notifications: the task as it stood when c was set
// (from its start, for a config a message set), then the task each time
// its state changes, to its end, in order.
func (p *pusher) watch(ctx context.Context, user string, c *pushConfig) {
	defer func() {
		p.mu.Lock()
		c.ended = time.Now()
		p.mu.Unlock()
		c.cancel()
	}()
	info, err := p.s.Run(ctx, user, c.task)
	if err != nil {
		return
	}
	cur, err := p.s.Attach(ctx, user, c.task, 0)
	if err != nil {
		return
	}
	defer cur.Close()
	tr := newTranslator(fileSource{s: p.s, base: p.base}, info)
	snap := newSnapshot(tr, info)
	var sent a2a.TaskState
	for {
		rec, ok, err := cur.Next(ctx, time.Minute)
		if err != nil {
			return // the log's end (io.EOF, after the Done record), or ctx's
		}
		if !ok {
			continue
		}
		done := rec.Kind == agentserver.KindDone
		snap.fold(tr, &rec, done || rec.Kind == agentserver.KindPause && cur.Buffered() == 0)
		if rec.Kind == agentserver.KindDecision && snap.task.Status.State == a2a.TaskStateInputRequired {
			snap.apply(tr.status(a2a.TaskStateWorking, rec.Time, nil, false)) // decided: the task goes on
		}
		if rec.Offset+1 < c.from && !done {
			continue // what the task was before c was set
		}
		if st := snap.task.Status.State; st != sent {
			sent = st
			p.notify(ctx, c, &snap.task)
		}
		if done {
			return
		}
	}
}

// notify sends the task to c's webhook, as c's version says it: 0.3's
// Task, or 1.0's StreamResponse holding the Task.
func (p *pusher) notify(ctx context.Context, c *pushConfig, t *a2a.Task) {
	var body []byte
	var err error
	if c.v1 {
		var vt *a2av1.Task
		if vt, err = a2av0.ToV1Task(t); err == nil {
			body, err = json.Marshal(a2av1.StreamResponse{Event: vt})
		}
	} else {
		body, err = json.Marshal(t)
	}
	if err == nil {
		err = p.deliver(ctx, c, body)
	}
	if err != nil && ctx.Err() == nil {
		p.logger.LogAttrs(ctx, slog.LevelWarn, "a2aagent: push notification not delivered",
			slog.String("task", c.task), slog.String("config", c.id), slog.String("state", string(t.Status.State)), slog.Any("error", err))
	}
}

// deliver posts body to c's webhook, retried as the options say.
func (p *pusher) deliver(ctx context.Context, c *pushConfig, body []byte) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.Multiplier, b.MaxElapsedTime = p.opts.RetryDelay, 2, 0
	b.MaxInterval = p.opts.RetryDelay << 6
	var policy backoff.BackOff = &backoff.StopBackOff{}
	if p.opts.Retries > 0 {
		policy = backoff.WithMaxRetries(b, uint64(p.opts.Retries))
	}
	return backoff.Retry(func() error { return p.post(ctx, c, body) }, backoff.WithContext(policy, ctx))
}

// post makes one attempt at delivering body to c's webhook.
func (p *pusher) post(ctx context.Context, c *pushConfig, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return backoff.Permanent(err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	if c.token != "" {
		// 1.0's SDKs read one name, 0.3's the other.
		h.Set("A2A-Notification-Token", c.token)
		h.Set("X-A2A-Notification-Token", c.token)
	}
	if c.credentials != "" {
		h.Set("Authorization", c.scheme+" "+c.credentials)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if errors.Is(err, errBlockedAddress) {
			return backoff.Permanent(err)
		}
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return backoff.Permanent(fmt.Errorf("the webhook answered %s", resp.Status))
}

// messagePushV0 reads the push config a 0.3 message sets, if any, for
// the task it starts or goes on with.
func messagePushV0(p *a2a.MessageSendParams) (*pushConfig, error) {
	if p.Config == nil || p.Config.PushConfig == nil {
		return nil, nil
	}
	var task a2a.TaskID
	if p.Message != nil {
		task = p.Message.TaskID
	}
	return pushFromV0(task, p.Config.PushConfig)
}

// messagePushV1 reads the push config a 1.0 message sets, if any.
func messagePushV1(req *a2av1.SendMessageRequest) (*pushConfig, error) {
	if req.Config == nil || req.Config.PushConfig == nil {
		return nil, nil
	}
	c := *req.Config.PushConfig
	if req.Message != nil {
		c.TaskID = req.Message.TaskID
	}
	return pushFromV1(&c)
}

// setPushV0 answers tasks/pushNotificationConfig/set.
func (h *handler) setPushV0(ctx context.Context, user string, p *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	c, err := pushFromV0(p.TaskID, &p.Config)
	if err != nil {
		return nil, err
	}
	if c, err = h.push.set(ctx, user, c); err != nil {
		return nil, err
	}
	return c.v0(), nil
}

// messagePush sets c, the push config a message set (checked by
// pusher.prepare before the message took effect), for the task the
// message started, or went on with (notified from the message on).
func (h *handler) messagePush(ctx context.Context, user string, att agentserver.Attachment, c *pushConfig) {
	if c == nil {
		return
	}
	run := att.Run
	c.task = run.ID
	if att.Continued {
		c.from = run.Len + 1 // from the decisions on
	}
	if c.id == "" {
		c.id = run.ID
	}
	if err := h.push.add(ctx, user, c); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "a2aagent: a message's push notification config was not set",
			slog.String("task", run.ID), slog.Any("error", err))
	}
}
