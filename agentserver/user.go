package agentserver

import (
	"context"

	"github.com/toolnexus/toolnexus-go/agentserver/internal/runctx"
)

// RunUser returns the user of the served run whose context ctx is, or is
// derived from, as Config.Authenticate named them: a tool or an
// Observer that keeps something per user (a credential, a conversation
// with a remote agent) reads it from the contexts the run hands it. A
// thread's id is the client's name for it, unique for one user only:
// RunUser and agent.Conversation together name one user's thread. It
// returns "" for other contexts. A tool that package devui runs by hand
// (its api/tools/{name}/run) is handed a context that names the user who
// asked, with no run (RunID is "").
func RunUser(ctx context.Context) string {
	return runctx.User(ctx)
}

// withRun returns ctx naming the run id of user, for RunID and RunUser.
func withRun(ctx context.Context, id, user string) context.Context {
	return runctx.WithUser(context.WithValue(ctx, runKey{}, id), user)
}

// WithUser returns ctx naming user for [RunUser]: for a route that runs
// the agent's tools outside the server's runs (package live's voice
// sessions), so that a tool that keeps something per user finds its user
// there as in a run.
func WithUser(ctx context.Context, user string) context.Context {
	return runctx.WithUser(ctx, user)
}
