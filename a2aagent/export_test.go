package a2aagent

import (
	"context"
	"net/netip"
)

// SetLookupHost makes handlers made from now on resolve webhooks' hosts
// with f, until restore is called: a test of DNS rebinding.
func SetLookupHost(f func(ctx context.Context, host string) ([]netip.Addr, error)) (restore func()) {
	old := lookupHost
	lookupHost = f
	return func() { lookupHost = old }
}

// CheckDial is the check of the address the webhooks' dialer dials.
var CheckDial = checkDial
