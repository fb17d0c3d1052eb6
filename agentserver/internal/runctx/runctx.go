// Package runctx holds the context key of agentserver.RunUser, so that
// package devui can run a tool by hand with the user set as a served run
// sets it, without a public way to name a user on a context.
package runctx

import "context"

// userKey is the context key of the user.
type userKey struct{}

// WithUser returns a copy of ctx naming user as the user of what runs
// under it.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// User returns the user WithUser put in ctx, or "".
func User(ctx context.Context) string {
	user, _ := ctx.Value(userKey{}).(string)
	return user
}
