package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// Run runs a on a conversation of store: it loads the conversation id (a
// conversation the store does not hold starts empty), runs a on its
// contents followed by input, and appends input and every content the run
// added to the conversation, in one Append. The Result is the run's: its
// History is the whole conversation.
//
// A run that fails is saved too, as far as it went: its partial
// Result.History always ends where the conversation can go on (every
// function call answered; see package agent), so the next Run continues it.
// The error is the run's; when saving fails as well, the error joins the
// run's (if any) and the store's, so that errors.Is finds both.
//
// input may be empty, to continue a conversation whose last run failed
// (say, after the turn limit): the model picks up where it stopped.
//
// The run's context names the conversation (see agent.WithConversation),
// so that observers and tracing see it, unless ctx names one already.
//
// Runs on one conversation are not serialized: two that overlap both load
// the conversation as it was, and each appends its own contents, one after
// the other, so neither sees the other's exchange but nothing is lost.
func Run(ctx context.Context, a *agent.Agent, store Store, id string, input ...*genai.Content) (*agent.Result, error) {
	ctx = conversation(ctx, id)
	loaded, err := load(ctx, store, id, input)
	if err != nil {
		return &agent.Result{History: slices.Clone(input)}, err
	}
	res, err := a.Run(ctx, append(loaded, input...))
	return res, save(ctx, store, id, len(loaded), res, err)
}

// Stream is [Run] with [agent.Agent.Stream]: it yields the run's events as
// Stream does, and saves the run before it yields EventDone, whose error
// (the second value, and Event.Err) then includes a failure to save. When
// the consumer breaks out of its loop, the run stops (as Stream says) and
// is saved, as far as it went, before Stream returns; a failure to save it
// is then reported to nobody.
func Stream(ctx context.Context, a *agent.Agent, store Store, id string, input ...*genai.Content) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		ctx := conversation(ctx, id)
		loaded, err := load(ctx, store, id, input)
		if err != nil {
			res := &agent.Result{History: slices.Clone(input)}
			yield(&agent.Event{Kind: agent.EventDone, Result: res, Err: err}, err)
			return
		}
		// The observer sees the run's end even when the consumer has
		// gone; the loop sees it when the run could not start.
		var done *agent.Event
		seen := agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
			if e.Kind == agent.EventDone {
				done = e
			}
		})
		stopped := false
		for e, err := range a.With(agent.Overrides{Observer: seen}).Stream(ctx, append(loaded, input...)) {
			if e != nil && e.Kind == agent.EventDone {
				done = e
				break
			}
			if !yield(e, err) {
				stopped = true
				break
			}
		}
		if done == nil {
			return // Stream always ends with EventDone; nothing to save without it
		}
		err = save(ctx, store, id, len(loaded), done.Result, done.Err)
		if stopped {
			return
		}
		e := *done
		e.Err = err
		yield(&e, err)
	}
}

// conversation returns ctx naming the conversation id, for observers and
// tracing (see agent.WithConversation), unless it names one already: a
// server that runs threads names the thread.
func conversation(ctx context.Context, id string) context.Context {
	if agent.Conversation(ctx) != "" {
		return ctx
	}
	return agent.WithConversation(ctx, id)
}

// load returns the conversation's contents, or none when the store does
// not hold it.
func load(ctx context.Context, store Store, id string, input []*genai.Content) ([]*genai.Content, error) {
	loaded, err := store.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		loaded, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(loaded) == 0 && len(input) == 0 {
		return nil, fmt.Errorf("session: nothing to run: conversation %q is empty and there is no input", id)
	}
	return loaded, nil
}

// save appends what the run added to the loaded contents, and returns the
// run's error joined with the store's, if any.
func save(ctx context.Context, store Store, id string, loaded int, res *agent.Result, runErr error) error {
	if res == nil || len(res.History) <= loaded {
		return runErr
	}
	// The run's context may be what ended it; the conversation is saved
	// all the same, as far as it went.
	ctx = context.WithoutCancel(ctx)
	if err := store.Append(ctx, id, res.History[loaded:]); err != nil {
		return errors.Join(runErr, fmt.Errorf("session: saving the run to %q: %w", id, err))
	}
	return runErr
}
