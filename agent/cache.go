package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"google.golang.org/genai"
)

// CachePolicy turns on explicit context caching for an agent's runs (see
// the package documentation, "Context caching"). Caches and TTL are
// required; the other fields have defaults.
type CachePolicy struct {
	// Caches makes, refreshes and deletes the caches: pass client.Caches
	// of the client whose Models the agent uses.
	Caches Caches

	// TTL is how long a cache lives after it was made or last refreshed.
	// The loop refreshes a cache it uses once less than half of it
	// remains. It must be at least a second (the API counts whole
	// seconds); the API's own default is an hour.
	TTL time.Duration

	// MinTokens is the size, in tokens, below which the loop does not try
	// to make a cache: what every request repeats is estimated at 4 bytes
	// a token of its JSON. Zero means the model's minimum as the Gemini
	// API documents it (2048 for Gemini 2.5, 1024 for Gemini 3 Flash,
	// 4096 for the others); the API's own refusal of a cache as too small
	// is remembered as well.
	MinTokens int

	// MaxCaches bounds the caches the agent keeps at once: a new cache
	// past it replaces (deletes) the one least recently used. An agent
	// sends one request shape per run, two when its tool config forces a
	// call on the first turn, more for typed runs and agents derived with
	// [Agent.With] that change what is cached. Zero means
	// DefaultMaxCaches (4).
	MaxCaches int

	// ConversationStep, when above zero, puts a prefix of the
	// conversation in the cache too, beside what every request repeats,
	// so that a long conversation's old messages are billed at the cached
	// price: the cache holds the contents before a user message (one that
	// is not a function response) and the request sends the rest. The
	// prefix grows in steps of about ConversationStep tokens (estimated at
	// 4 bytes a token of their JSON): it ends at the first user message
	// where the conversation reached the last multiple of ConversationStep
	// it has reached before its newest user message, so it stays the
	// same, and so does its cache, until the conversation has grown past
	// the next multiple. Each
	// step makes a cache anew (billed at the full input price once) and
	// deletes the one it extends. The fingerprint covers the prefix, so a
	// prefix that changed (a history trimmed or edited) gets a cache of
	// its own, never a stale one. Each conversation in use holds a cache,
	// bounded by MaxCaches. Zero caches no contents.
	ConversationStep int
}

// DefaultMaxCaches is the number of caches an agent keeps at once when
// CachePolicy.MaxCaches is zero.
const DefaultMaxCaches = 4

// cacheRetryWait is how long the loop waits before it tries again to make
// or refresh a cache after a failure that may pass (a 429, a 5xx, a
// broken connection): meanwhile the requests go uncached, or use the
// cache until it expires.
const cacheRetryWait = time.Minute

// Caches is what the loop needs of genai's Caches client. *genai.Caches
// satisfies it: pass client.Caches.
type Caches interface {
	Create(ctx context.Context, model string, config *genai.CreateCachedContentConfig) (*genai.CachedContent, error)
	Update(ctx context.Context, name string, config *genai.UpdateCachedContentConfig) (*genai.CachedContent, error)
	Delete(ctx context.Context, name string, config *genai.DeleteCachedContentConfig) (*genai.DeleteCachedContentResponse, error)
}

// ExplicitCacher is an optional interface of a [Models]: one whose API
// takes no explicit context caches (no cachedContent named in a request)
// implements it and returns false, and [New] refuses an agent whose
// Config.Cache is set on it, with [ErrNoExplicitCaching]. A Models that
// does not implement it is taken to take them, as genai's does.
// geminiinteractions' Models returns false: the Interactions API caches
// implicitly only.
type ExplicitCacher interface {
	ExplicitCaching() bool
}

// ErrNoExplicitCaching is the error of [New] for an agent whose
// Config.Cache is set while its Config.Models says ([ExplicitCacher]) that
// its API takes no explicit caches.
var ErrNoExplicitCaching = errors.New("agent: Config.Cache is set, but Config.Models takes no explicit caches")

// CacheAction says what an [EventCache] reports.
type CacheAction string

// The cache actions.
const (
	// CacheCreated: the loop made a cache (Name, Tokens: what the API
	// counted in it).
	CacheCreated CacheAction = "created"
	// CacheRefreshed: the loop extended a cache's life by the TTL (Name).
	CacheRefreshed CacheAction = "refreshed"
	// CacheRecreated: a request named a cache the API no longer has
	// (expired or deleted); the loop made a new one and sends the request
	// again (Name: the new cache, Err: the API's error).
	CacheRecreated CacheAction = "recreated"
	// CacheDeleted: the loop deleted a cache it replaced (Name).
	CacheDeleted CacheAction = "deleted"
	// CacheNotCacheable: what the requests repeat is below the minimum,
	// or the API refused to cache it (Err); the agent's requests of that
	// shape go uncached from now on.
	CacheNotCacheable CacheAction = "not cacheable"
	// CacheFallback: caching failed (Err); the request is sent uncached.
	// The run goes on.
	CacheFallback CacheAction = "fallback"
)

// CacheReport is what an [EventCache] says of the agent's cache.
type CacheReport struct {
	Action CacheAction
	Name   string // the cache's resource name, when there is one
	Tokens int    // CacheCreated: the tokens the cache holds
	Err    error  // why, for CacheRecreated, CacheNotCacheable and CacheFallback
}

// errCacheTooSmall is the Err of a CacheNotCacheable report when the loop
// did not ask the API: the estimate is below the floor.
var errCacheTooSmall = errors.New("agent: what the requests repeat is below the cache minimum")

// cacher keeps an agent's caches, one per fingerprint of the cached parts
// of its request configs. Agents derived with With share it. It is safe
// for concurrent use: c.mu guards the maps and each entry's state, and
// each entry's sem is held while the entry's cache is made, refreshed or
// deleted, so that concurrent runs make one cache, not several.
type cacher struct {
	caches    Caches
	model     string
	ttl       time.Duration
	minTokens int
	max       int
	step      int // CachePolicy.ConversationStep
	logger    *slog.Logger
	now       func() time.Time

	mu      sync.Mutex
	entries map[string]*cacheEntry                       // by fingerprint
	shapes  map[*genai.GenerateContentConfig]*cacheEntry // the entry of each config seen, a memo
	clock   uint64                                       // counts uses, for MaxCaches
	closed  bool
}

// cacheEntry is one fingerprint's cache.
type cacheEntry struct {
	fp     string
	tokens int           // the estimate of its size
	prefix int           // the contents it holds, a prefix of the conversation
	sem    chan struct{} // held while a call to the API changes it

	// Under cacher.mu.
	name      string    // the live cache, "" when there is none
	expires   time.Time // when it expires, on the loop's clock
	refused   error     // why it is not cacheable; set once, for good
	waitUntil time.Time // no create or refresh before, after one that failed
	used      uint64    // cacher.clock at its last use
}

// newCacher checks p and returns the cacher it asks for, or nil when p is.
func newCacher(p *CachePolicy, models Models, model string, logger *slog.Logger) (*cacher, error) {
	if p == nil {
		return nil, nil
	}
	if ec, ok := models.(ExplicitCacher); ok && !ec.ExplicitCaching() {
		return nil, fmt.Errorf("%w (%T: its API caches implicitly only; leave Config.Cache nil)", ErrNoExplicitCaching, models)
	}
	switch {
	case p.Caches == nil:
		return nil, errors.New("agent: Config.Cache.Caches is nil (pass client.Caches)")
	case p.TTL < time.Second:
		return nil, fmt.Errorf("agent: Config.Cache.TTL is %v: a cache must live at least a second", p.TTL)
	case p.MinTokens < 0, p.MaxCaches < 0, p.ConversationStep < 0:
		return nil, fmt.Errorf("agent: negative limit in Config.Cache (MinTokens %d, MaxCaches %d, ConversationStep %d)",
			p.MinTokens, p.MaxCaches, p.ConversationStep)
	}
	c := &cacher{
		caches:    p.Caches,
		model:     model,
		ttl:       p.TTL,
		minTokens: orDefault(p.MinTokens, modelname.MinCacheTokens(model)),
		max:       orDefault(p.MaxCaches, DefaultMaxCaches),
		step:      p.ConversationStep,
		logger:    logger,
		now:       time.Now,
		entries:   map[string]*cacheEntry{},
		shapes:    map[*genai.GenerateContentConfig]*cacheEntry{},
	}
	return c, nil
}

// cachedParts is what a cache holds of a request config, in the order the
// API reads a prompt, and what its fingerprint is computed from.
type cachedParts struct {
	Model             string            `json:"model"`
	SystemInstruction *genai.Content    `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool     `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig `json:"toolConfig,omitempty"`
}

// entry returns the entry of config's cached parts, made on first sight.
// Configs are the agent's, made once and never modified, so the entry of
// each is remembered (a few hundred at most: the memo is emptied past it).
func (c *cacher) entry(config *genai.GenerateContentConfig) *cacheEntry {
	c.mu.Lock()
	e := c.shapes[config]
	c.mu.Unlock()
	if e != nil {
		return e
	}
	b, err := json.Marshal(cachedParts{c.model, config.SystemInstruction, config.Tools, config.ToolConfig})
	sum := sha256.Sum256(b)
	fp := hex.EncodeToString(sum[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	if e = c.entries[fp]; e == nil {
		e = &cacheEntry{fp: fp, tokens: len(b) / 4, sem: make(chan struct{}, 1)}
		switch {
		case err != nil:
			e.refused = fmt.Errorf("agent: encoding what a cache would hold: %w", err)
		case config.SystemInstruction == nil && len(config.Tools) == 0 && config.ToolConfig == nil:
			e.refused = errors.New("agent: the requests repeat nothing a cache holds")
		case e.tokens < c.minTokens:
			e.refused = fmt.Errorf("%w (about %d tokens, minimum %d)", errCacheTooSmall, e.tokens, c.minTokens)
		}
		c.entries[fp] = e
	}
	if len(c.shapes) >= 256 {
		clear(c.shapes)
	}
	c.shapes[config] = e
	return e
}

// request returns what to send for config and contents: a copy of config
// that names its cache and leaves out what the cache holds, with the
// contents the cache does not hold, or config and contents themselves
// when the request goes uncached. gone, when not empty, is a cache a
// request named and the API no longer has: it is made again. report
// receives what happened to the cache.
func (c *cacher) request(ctx context.Context, config *genai.GenerateContentConfig, contents []*genai.Content, gone string, report func(*CacheReport)) (*genai.GenerateContentConfig, []*genai.Content, CacheRef) {
	base := c.entry(config)
	send, fp := contents, base.fp
	var name string
	if c.step > 0 {
		if e, chain := c.prefixEntry(base, contents); e != nil {
			if name = c.use(ctx, e, config, contents[:e.prefix], gone, report); name != "" {
				send, fp = contents[e.prefix:], e.fp
				c.supersede(ctx, e, chain, report)
			}
		}
	}
	if name == "" {
		name = c.use(ctx, base, config, nil, gone, report)
		send, fp = contents, base.fp
	}
	if name == "" {
		return config, contents, CacheRef{}
	}
	sent := *config
	sent.SystemInstruction, sent.Tools, sent.ToolConfig = nil, nil, nil
	sent.CachedContent = name
	return &sent, send, CacheRef{Name: name, Fingerprint: fp}
}

// CacheRef names a cache an agent's loop made: its resource name and the
// fingerprint of what it holds. It is what a durable run keeps of the
// cache between its steps ([Steps.CacheRequest]), so that a step on
// another process, or after a restart, uses the cache instead of making
// another.
type CacheRef struct {
	Name        string `json:",omitempty"`
	Fingerprint string `json:",omitempty"`
}

// adopt takes ref as the cache of its fingerprint when c has none: c did
// not make it (another process did), so it is refreshed before its first
// use, which tells whether the API still has it; when it does not, it is
// made anew.
func (c *cacher) adopt(ref CacheRef) {
	if ref.Name == "" || ref.Fingerprint == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[ref.Fingerprint]
	if e == nil {
		e = &cacheEntry{fp: ref.Fingerprint, sem: make(chan struct{}, 1)}
		c.entries[ref.Fingerprint] = e
	}
	if e.name != "" || e.refused != nil || c.closed {
		return
	}
	// Less than half the TTL left: the next use refreshes it.
	e.name, e.expires = ref.Name, c.now().Add(c.ttl/2-time.Nanosecond)
}

// prefixStep is one place the conversation may be cut for a cache: before
// contents[at], a user message that is not a function response.
type prefixStep struct {
	at     int
	tokens int    // the estimate of contents[:at]
	fp     string // the fingerprint of the cache holding base and contents[:at]
}

// prefixEntry returns the entry of the cache that holds base's parts and
// the conversation's stable prefix (see CachePolicy.ConversationStep), or
// nil when no prefix is due yet, with the places the conversation may be
// cut before it, for supersede.
func (c *cacher) prefixEntry(base *cacheEntry, contents []*genai.Content) (*cacheEntry, []prefixStep) {
	var steps []prefixStep
	h := sha256.New()
	h.Write([]byte(base.fp))
	size := 0
	for i, m := range contents {
		if i > 0 && userMessage(m) {
			steps = append(steps, prefixStep{at: i, tokens: size, fp: hex.EncodeToString(h.Sum(nil))})
		}
		b, err := json.Marshal(m)
		if err != nil {
			break // not cacheable past it; the request fails on its own
		}
		sum := sha256.Sum256(b)
		h.Write(sum[:])
		size += len(b) / 4
	}
	if len(steps) == 0 {
		return nil, nil
	}
	// The first place past the last multiple of the step: it moves only
	// when the conversation grows past the next one.
	target := steps[len(steps)-1].tokens / c.step * c.step
	if target == 0 {
		return nil, nil
	}
	k := 0
	for steps[k].tokens < target {
		k++
	}
	s := steps[k]
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[s.fp]
	if e == nil {
		e = &cacheEntry{fp: s.fp, tokens: base.tokens + s.tokens, prefix: s.at, sem: make(chan struct{}, 1)}
		if e.tokens < c.minTokens {
			e.refused = fmt.Errorf("%w (about %d tokens, minimum %d)", errCacheTooSmall, e.tokens, c.minTokens)
		}
		c.entries[s.fp] = e
	} else if e.prefix == 0 {
		// Adopted (adopt): the fingerprint says what it holds.
		e.prefix, e.tokens = s.at, base.tokens+s.tokens
	}
	return e, steps[:k]
}

// userMessage reports whether m is a user's message (no function
// response), where a cached prefix of the conversation may end.
func userMessage(m *genai.Content) bool {
	if m == nil || m.Role != genai.RoleUser || len(m.Parts) == 0 {
		return false
	}
	for _, p := range m.Parts {
		if p == nil || p.FunctionResponse != nil {
			return false
		}
	}
	return true
}

// supersede deletes the caches of the shorter prefixes of the
// conversation that e's extends (before holds where they ended): e
// replaces them. A run that still names one is refused, and makes its
// cache again once (cacheLost).
func (c *cacher) supersede(ctx context.Context, e *cacheEntry, before []prefixStep, report func(*CacheReport)) {
	var victims []string
	c.mu.Lock()
	for _, s := range before {
		old := c.entries[s.fp]
		if old == nil || old == e || old.name == "" || len(old.sem) != 0 {
			continue
		}
		victims = append(victims, old.name)
		old.name = ""
		delete(c.entries, s.fp)
	}
	c.mu.Unlock()
	c.deleteAll(ctx, victims, "agent: deleting a cache a longer prefix replaced failed", report)
}

// use returns the name of e's live cache, made or refreshed as needed, or
// "" when the request goes uncached. prefix is the conversation e's cache
// holds (e.prefix contents).
func (c *cacher) use(ctx context.Context, e *cacheEntry, config *genai.GenerateContentConfig, prefix []*genai.Content, gone string, report func(*CacheReport)) string {
	c.mu.Lock()
	if c.closed || e.refused != nil {
		c.mu.Unlock()
		return ""
	}
	c.clock++
	e.used = c.clock
	if e.name != "" && e.name != gone && e.expires.Sub(c.now()) >= c.ttl/2 {
		name := e.name
		c.mu.Unlock()
		return name // the common case: no call to the API
	}
	c.mu.Unlock()

	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return ""
	}
	defer func() { <-e.sem }()
	c.mu.Lock()
	if cur := c.entries[e.fp]; cur != e {
		// evict forgot e meanwhile: use the entry the map holds now,
		// or put e back, so that Close finds what e will hold.
		if cur != nil {
			c.mu.Unlock()
			return c.use(ctx, cur, config, prefix, gone, report)
		}
		c.entries[e.fp] = e
	}
	name, expires, refused, wait, closed := e.name, e.expires, e.refused, e.waitUntil, c.closed
	c.mu.Unlock()
	now := c.now()
	switch {
	case closed || refused != nil:
		return ""
	case name != "" && name == gone:
		name = "" // the API no longer has it
	case name != "" && expires.Sub(now) >= c.ttl/2:
		return name // another run made or refreshed it meanwhile
	case name != "" && now.Before(expires) && now.Before(wait):
		return name // a refresh failed lately: not tried again yet
	case name != "" && now.Before(expires):
		_, err := c.caches.Update(ctx, name, &genai.UpdateCachedContentConfig{TTL: c.ttl})
		if err == nil {
			c.set(e, name, now.Add(c.ttl))
			c.say(ctx, report, &CacheReport{Action: CacheRefreshed, Name: name})
			return name
		}
		if !cacheMissing(err) {
			// It still lives until it expires: use it, and try again
			// a little later.
			c.logger.LogAttrs(ctx, slog.LevelWarn, "agent: refreshing a cache failed", slog.String("cache", name), slog.Any("error", err))
			if ctx.Err() == nil {
				c.mu.Lock()
				e.waitUntil = now.Add(cacheRetryWait)
				c.mu.Unlock()
			}
			return name
		}
		name = ""
	}
	if now.Before(wait) {
		return ""
	}
	cc, err := c.caches.Create(ctx, c.model, &genai.CreateCachedContentConfig{
		TTL:               c.ttl,
		SystemInstruction: config.SystemInstruction,
		Tools:             config.Tools,
		ToolConfig:        config.ToolConfig,
		Contents:          prefix,
	})
	if err == nil && (cc == nil || cc.Name == "") {
		err = errors.New("agent: the API made a cache with no name")
	}
	if err != nil {
		c.mu.Lock()
		e.name = ""
		switch {
		case notCacheable(err):
			e.refused = err
		case ctx.Err() == nil: // not a run that was cancelled
			e.waitUntil = now.Add(cacheRetryWait)
		}
		c.mu.Unlock()
		action := CacheFallback
		if notCacheable(err) {
			action = CacheNotCacheable
		}
		c.say(ctx, report, &CacheReport{Action: action, Err: err})
		return ""
	}
	c.set(e, cc.Name, now.Add(c.ttl))
	r := &CacheReport{Action: CacheCreated, Name: cc.Name}
	if cc.UsageMetadata != nil {
		r.Tokens = int(cc.UsageMetadata.TotalTokenCount)
	}
	if gone != "" {
		r.Action = CacheRecreated
	}
	c.say(ctx, report, r)
	c.evict(ctx, e, report)
	return cc.Name
}

// set records e's live cache.
func (c *cacher) set(e *cacheEntry, name string, expires time.Time) {
	c.mu.Lock()
	e.name, e.expires = name, expires
	c.mu.Unlock()
}

// evict deletes the caches least recently used past MaxCaches, but keep's,
// and forgets the entries that hold nothing (but those refused, which are
// remembered), so that an agent that sees many shapes keeps few entries.
// An entry another run is changing is left alone; one that a run is about
// to change when it is forgotten is put back by use.
func (c *cacher) evict(ctx context.Context, keep *cacheEntry, report func(*CacheReport)) {
	var victims []string
	c.mu.Lock()
	for {
		live := 0
		var oldest *cacheEntry
		for _, e := range c.entries {
			if e.name == "" {
				continue
			}
			live++
			if e != keep && len(e.sem) == 0 && (oldest == nil || e.used < oldest.used) {
				oldest = e
			}
		}
		if live <= c.max || oldest == nil {
			break
		}
		victims = append(victims, oldest.name)
		oldest.name = ""
	}
	for fp, e := range c.entries {
		if e.name == "" && (e.refused == nil || e.prefix > 0) && len(e.sem) == 0 && e != keep {
			delete(c.entries, fp)
		}
	}
	clear(c.shapes)
	c.mu.Unlock()
	c.deleteAll(ctx, victims, "agent: deleting a replaced cache failed", report)
}

// deleteAll deletes the caches names, reporting each, and logs failures
// with msg.
func (c *cacher) deleteAll(ctx context.Context, names []string, msg string, report func(*CacheReport)) {
	for _, name := range names {
		if err := c.delete(ctx, name); err != nil {
			c.logger.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("cache", name), slog.Any("error", err))
			continue
		}
		c.say(ctx, report, &CacheReport{Action: CacheDeleted, Name: name})
	}
}

// delete deletes a cache; one the API no longer has is no error.
func (c *cacher) delete(ctx context.Context, name string) error {
	_, err := c.caches.Delete(ctx, name, nil)
	if err != nil && !cacheMissing(err) {
		return fmt.Errorf("agent: deleting cache %s: %w", name, err)
	}
	return nil
}

// say logs r and hands it to report.
func (c *cacher) say(ctx context.Context, report func(*CacheReport), r *CacheReport) {
	level := slog.LevelDebug
	if r.Action == CacheFallback {
		level = slog.LevelWarn
	}
	c.logger.LogAttrs(ctx, level, "agent: cache "+string(r.Action), slog.String("cache", r.Name), slog.Any("error", r.Err))
	report(r)
}

// close deletes every cache c made and turns caching off.
func (c *cacher) close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	entries := make([]*cacheEntry, 0, len(c.entries))
	for _, e := range c.entries {
		entries = append(entries, e)
	}
	c.mu.Unlock()
	var errs []error
	for _, e := range entries {
		select {
		case e.sem <- struct{}{}: // a create under way finishes first
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		}
		c.mu.Lock()
		name := e.name
		e.name = ""
		c.mu.Unlock()
		if name != "" {
			if err := c.delete(ctx, name); err != nil {
				errs = append(errs, err)
			}
		}
		<-e.sem
	}
	return errors.Join(errs...)
}

// Close deletes the caches the agent made (see [CachePolicy]) and turns
// caching off: the agent, and those derived from it with [Agent.With],
// still run, uncached. A cache the API no longer has is no error; the
// others' errors are joined. Close does nothing for an agent without a
// CachePolicy, and is safe to call more than once.
func (a *Agent) Close(ctx context.Context) error {
	if a.cache == nil {
		return nil
	}
	return a.cache.close(ctx)
}

// cacheGone reports whether err is the API's answer for a cache it does
// not have: expired, deleted, never made or another project's. The Gemini
// API answers 403 PERMISSION_DENIED "CachedContent not found (or
// permission denied)"; Vertex AI answers a generateContent 400
// FAILED_PRECONDITION "Invalid resource state for cache content {id}.",
// earlier 400 "Cache content {id} is expired", and a get, patch or delete
// 404 "Cached content {id} is not found." (caching.md §6). A 400 that
// speaks of the cache otherwise (another model's, or one the request
// cannot be sent with) is one too: the request is sent with a cache made
// again, and then uncached.
func cacheGone(err error) bool {
	var e genai.APIError
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case http.StatusNotFound, http.StatusForbidden, http.StatusBadRequest:
		return strings.Contains(strings.ToLower(e.Message), "cache")
	}
	return false
}

// cacheMissing reports whether err is the cachedContents routes' answer
// for a cache they do not have: 404 NOT_FOUND on Vertex AI, 403
// PERMISSION_DENIED "CachedContent not found (or permission denied)" on
// the Gemini API (caching.md §6); a 403 that does not speak of the cache
// (a key without access) is not.
func cacheMissing(err error) bool {
	var e genai.APIError
	return errors.As(err, &e) && (e.Code == http.StatusNotFound ||
		e.Code == http.StatusForbidden && strings.Contains(strings.ToLower(e.Message), "cache"))
}

// notCacheable reports whether a create failed for a reason asking again
// does not mend: a 400 (too small, a model without caching, a part a
// cache cannot hold) or a 404 (a model unknown to caching).
func notCacheable(err error) bool {
	var e genai.APIError
	return errors.As(err, &e) && (e.Code == http.StatusBadRequest || e.Code == http.StatusNotFound)
}

// cacheRequest returns the config and contents a model call sends for
// config and contents: through the agent's cache when it has one (see
// cacher.request). gone names a cache the API said it no longer has.
func (r *run) cacheRequest(config *genai.GenerateContentConfig, contents []*genai.Content, turn int, gone string) (*genai.GenerateContentConfig, []*genai.Content) {
	sent, send, _ := r.a.cache.request(r.ctx, config, contents, gone, r.cacheReporter(turn))
	return sent, send
}

// cacheLost handles a model call that sent sent, naming a cache, and that
// the API refused for its cache (cacheGone): the first time in a turn,
// the cache is made again and the request sent with it; after that, the
// cache is given up (the agent's requests of this shape go uncached from
// now on) and the request sent uncached, as it is when the cache cannot
// be made again. It returns the config and contents to send.
func (r *run) cacheLost(turn int, base, sent *genai.GenerateContentConfig, contents []*genai.Content, recovered *bool) (*genai.GenerateContentConfig, []*genai.Content) {
	if !*recovered {
		*recovered = true
		return r.cacheRequest(base, contents, turn, sent.CachedContent) // base when it cannot be made: reported
	}
	r.a.cache.giveUp(r.ctx, sent.CachedContent, r.cacheReporter(turn))
	return base, contents
}

// giveUp gives up the cache named name, which the API refused twice in a
// row, and reports it.
func (c *cacher) giveUp(ctx context.Context, name string, report func(*CacheReport)) {
	err := fmt.Errorf("agent: the API refused cache %s twice in a row", name)
	c.refuse(name, err)
	c.say(ctx, report, &CacheReport{Action: CacheNotCacheable, Name: name, Err: err})
}

// CacheRequest returns what a model call of turn sends for config and
// contents through the agent's cache (Config.Cache), as Run sends it, and
// the cache it names; config, contents and the zero CacheRef when the call
// goes uncached or the agent has no cache. known is the cache an earlier
// step of the run named, which the agent takes as its own when it holds
// none of that fingerprint (it was made by another process: it is
// refreshed before use, and made anew if the API no longer has it). gone
// is a cache the API just refused for this call ([Steps.CacheGone]): it
// is made again, once; a second refusal is for [Steps.GiveUpCache]. The
// cache's events go to the Observer under ctx.
func (s Steps) CacheRequest(ctx context.Context, turn int, config *genai.GenerateContentConfig, contents []*genai.Content,
	known CacheRef, gone string) (*genai.GenerateContentConfig, []*genai.Content, CacheRef) {
	if s.a.cache == nil {
		return config, contents, CacheRef{}
	}
	s.a.cache.adopt(known)
	return s.a.cache.request(ctx, config, contents, gone, s.cacheReporter(ctx, turn))
}

// CacheGone reports whether err, the error of a model call that named a
// cache, is the API's refusal of that cache (expired, deleted, another
// model's): the call is sent again through [Steps.CacheRequest] with gone
// set, as Run does.
func (s Steps) CacheGone(err error) bool { return cacheGone(err) }

// GiveUpCache gives up the cache named name, which the API refused twice
// in a row for a call of turn: the agent's requests of its shape go
// uncached from now on, as in Run.
func (s Steps) GiveUpCache(ctx context.Context, turn int, name string) {
	if s.a.cache != nil {
		s.a.cache.giveUp(ctx, name, s.cacheReporter(ctx, turn))
	}
}

// cacheReporter hands a cache report to the Observer, as an EventCache.
func (s Steps) cacheReporter(ctx context.Context, turn int) func(*CacheReport) {
	return func(rep *CacheReport) {
		s.Observe(ctx, &Event{Kind: EventCache, Turn: turn, Cache: rep, Err: rep.Err})
	}
}

// cacheReporter returns the function that hands a cache report to the
// run's observer and Stream consumer, as an EventCache.
func (r *run) cacheReporter(turn int) func(*CacheReport) {
	return func(rep *CacheReport) {
		if r.emitting {
			r.emit(r.ctx, &Event{Kind: EventCache, Turn: turn, Cache: rep, Err: rep.Err})
		}
	}
}

// refuse gives up the cache named name, which the API refused twice in a
// row: its entry is not cacheable from now on. The cache is deleted on
// Close or when it expires.
func (c *cacher) refuse(name string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.name == name {
			e.refused = err
			// name stays, so that Close deletes it.
		}
	}
}
