package agentserver

import "context"

// userKey is the context key of RunUser.
type userKey struct{}

// RunUser returns the user of the served run whose context ctx is, or is
// derived from, as Config.Authenticate named them: a tool or an
// Observer that keeps something per user (a credential, a conversation
// with a remote agent) reads it from the contexts the run hands it. A
// thread's id is the client's name for it, unique for one user only:
// RunUser and agent.Conversation together name one user's thread. It
// returns "" for other contexts.
func RunUser(ctx context.Context) string {
	user, _ := ctx.Value(userKey{}).(string)
	return user
}

// withRun returns ctx naming the run id of user, for RunID and RunUser.
func withRun(ctx context.Context, id, user string) context.Context {
	return context.WithValue(context.WithValue(ctx, runKey{}, id), userKey{}, user)
}

// WithUser returns ctx naming user for [RunUser]: for a route that runs
// the agent's tools outside the server's runs (package live's voice
// sessions), so that a tool that keeps something per user finds its user
// there as in a run.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}
