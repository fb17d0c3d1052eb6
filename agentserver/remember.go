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
