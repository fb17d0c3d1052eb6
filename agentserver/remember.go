package agentserver

import (
	"context"
	"log/slog"
	"slices"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// remember hands a run just saved to Config.Remember: the thread as
// saved, the contents before loaded from the store, contents the run's.
func (r *run) remember(ctx context.Context, res *agent.Result, loaded int, contents []*genai.Content) {
	if r.l.remember == nil || len(contents) == 0 || res == nil || len(res.History) < loaded {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			r.l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: Config.Remember panicked", slog.String("run", r.id), slog.Any("panic", v))
		}
	}()
	r.l.remember(ctx, r.user, r.conversation, slices.Concat(res.History[:loaded], contents), loaded)
}

// rememberSaved hands Config.Remember a recovered run whose answer was
// journaled whole and is now saved (saved, the contents it added), with
// the thread as stored.
func (r *run) rememberSaved(ctx context.Context, saved []*genai.Content) {
	if r.l.remember == nil {
		return
	}
	all, err := r.l.store.Load(ctx, r.thread)
	if err != nil || len(all) < len(saved) {
		return
	}
	loaded := len(all) - len(saved)
	r.remember(agent.WithConversation(ctx, r.conversation), &agent.Result{History: all[:loaded]}, loaded, saved)
}
