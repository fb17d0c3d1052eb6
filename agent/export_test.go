package agent

import "time"

// SetCacheClock makes a's cache bookkeeping read the time from now, so
// that a test moves it with the fake server's clock. Call it before a's
// first run.
func SetCacheClock(a *Agent, now func() time.Time) { a.cache.now = now }
