package agent

import "context"

// A Carrier is a [ContextObserver] whose view of a run, which it keeps in
// the run's contexts, can travel to another process as strings. A runtime
// that runs the steps of one run in several processes (temporalagent: a
// durable run's model and tool calls run on any worker, days apart) hands
// what Carry returns, from the context where the run began, to Resume in
// the process of each later step, so that the observer sees one run where
// agent.Run would have made it. otelagent's Observer is one: it carries
// the run's span, so that the spans of model and tool calls made anywhere
// nest under it, and the span of the caller that started the run.
//
// The strings are the observer's own: its keys, its format. They are
// written into durable state (a workflow's history), so they must be small
// and hold nothing secret.
type Carrier interface {
	ContextObserver

	// Carry returns what the observer keeps in ctx that a step run
	// elsewhere needs: the run ctx belongs to, once StartContext began
	// it, or before then what the run should continue (the caller's span,
	// for tracing). It returns nil when ctx holds nothing of the kind.
	Carry(ctx context.Context) map[string]string

	// Resume returns ctx, or a context derived from it, holding what
	// carried, which Carry returned in any process, says: the steps that
	// StartContext begins under it belong to the run carried, as if they
	// were begun under the context Carry read. Keys it does not know are
	// ignored; nil carried returns ctx.
	Resume(ctx context.Context, carried map[string]string) context.Context
}

// Carry returns what the members that are Carriers carry, merged; nil when
// none carries anything. Each member's keys are its own: when two write
// the same key, the later one's value is kept.
func (m scopedMulti) Carry(ctx context.Context) map[string]string {
	var out map[string]string
	for _, o := range m.multiObserver {
		c, ok := o.(Carrier)
		if !ok {
			continue
		}
		for k, v := range c.Carry(ctx) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// Resume hands carried to every member that is a Carrier, in order, each
// deriving from the context the previous returned.
func (m scopedMulti) Resume(ctx context.Context, carried map[string]string) context.Context {
	if carried == nil {
		return ctx
	}
	for _, o := range m.multiObserver {
		if c, ok := o.(Carrier); ok {
			ctx = c.Resume(ctx, carried)
		}
	}
	return ctx
}
