package geminitest

import (
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// CachedContent is a cache the server keeps, as [Server.Caches] reports
// it: its resource name (what a request names in cachedContent), display
// name, backend, model (without a path), what it holds (contents, system
// instruction, tools, tool config), its size in tokens (what a request
// that uses it reports as cachedContentTokenCount) and its create, update
// and expire times.
type CachedContent = fake.CachedContent

// The cachedContents methods, as [Request].Method names them.
const (
	MethodCreateCachedContent = fake.MethodCreateCachedContent
	MethodGetCachedContent    = fake.MethodGetCachedContent
	MethodListCachedContents  = fake.MethodListCachedContents
	MethodUpdateCachedContent = fake.MethodUpdateCachedContent
	MethodDeleteCachedContent = fake.MethodDeleteCachedContent
)

// DefaultCacheTTL is how long a cache lives when its create sets neither a
// TTL nor an expire time: an hour, as on both backends.
const DefaultCacheTTL = fake.DefaultCacheTTL

// ImplicitCacheLifetime is how long the server remembers a prompt's prefix
// for implicit caching after the last request that sent it.
const ImplicitCacheLifetime = fake.ImplicitCacheLifetime

// MinCacheTokens returns the fewest tokens a cache of model may hold, and
// the fewest a prompt must share with an earlier one to be reported as
// implicitly cached: 2048 for Gemini 2.5 models, 1024 for Gemini 3 Flash,
// 4096 for the others. Tokens are counted as the server's usage counts them,
// about 4 bytes of the request's JSON a token: a test that caches makes its
// system instruction at least 4 × MinCacheTokens bytes long.
func MinCacheTokens(model string) int { return fake.MinCacheTokens(model) }

// Caches returns the caches the server keeps, those not deleted and not
// expired at the server's time, in the order they were created. The
// caller owns the copies.
func (s *Server) Caches() []*CachedContent { return s.srv.Caches() }

// ExpireCaches ends the caches with these names, or all of them when none
// is given (and then forgets every prompt remembered for implicit
// caching), as their expiry does: a request that uses one is refused as the
// API refuses a cache that is gone. A test proves with it that code which
// uses a cache recovers when the cache is gone.
func (s *Server) ExpireCaches(names ...string) { s.srv.ExpireCaches(names...) }

// AdvanceTime moves the server's clock forward by d: caches whose expiry
// it passes are gone, and prompts remembered for implicit caching longer
// ago than [ImplicitCacheLifetime] are forgotten, as if d had passed. The
// clock is time.Now, or the function given to [Server.SetTimeNowFunc],
// plus every d so far. A negative d is ignored.
func (s *Server) AdvanceTime(d time.Duration) { s.srv.AdvanceTime(d) }
