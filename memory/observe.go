package memory

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of events.
const (
	// EventSearch: a search ended (Query, Results, Hybrid; Err: why the
	// search failed, or, with Results and Fallback set, why it fell back
	// to lexical ranking).
	EventSearch EventKind = iota + 1

	// EventIngest: memories were stored (Memories: those added; Thread,
	// for a thread's messages; Err when it failed).
	EventIngest

	// EventEmbed: memories of the user were embedded (Count), or
	// embedding them failed (Err; Attempt; Final when it will not be tried
	// again until the user's next ingest).
	EventEmbed

	// EventExtract: a model read a conversation (Thread) and the facts it
	// wrote were stored (Memories: added; Removed: the ids of the facts
	// they replace; Usage: the tokens the call took), or the attempt failed
	// (Err; Attempt; Final when it will not be tried again).
	EventExtract

	// EventForget: a memory (Removed) or every memory of the user (All)
	// was forgotten.
	EventForget
)

var eventKindNames = [...]string{EventSearch: "Search", EventIngest: "Ingest", EventEmbed: "Embed",
	EventExtract: "Extract", EventForget: "Forget"}

// String returns the kind's name without its Event prefix.
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(?)"
}

// An Event reports something the service did, to an [Observer]. Which
// fields are set depends on Kind. Receivers may keep it but must not
// modify it.
type Event struct {
	Kind EventKind
	User string

	Query    string   // EventSearch
	Results  []Result // EventSearch: what it returned
	Hybrid   bool     // EventSearch: both rankings were fused
	Fallback bool     // EventSearch: embeddings are configured but the query could not be embedded (Err says why): lexical only

	Thread   string   // EventIngest, EventExtract
	Memories []Memory // EventIngest, EventExtract: the memories added
	Removed  []string // EventExtract: facts replaced; EventForget: the memory forgotten
	All      bool     // EventForget: every memory of the user
	Count    int      // EventEmbed: memories embedded

	Usage   agent.Usage // EventExtract: the model's tokens
	Attempt int         // EventEmbed, EventExtract: from 1
	Final   bool        // EventEmbed, EventExtract: a failure that is not retried

	Start    time.Time
	Duration time.Duration
	Err      error
}

// An Observer sees what a [Service] does: searches with their results
// (package devui shows which memories a run used), ingests, embeddings,
// extractions and their cost, failures and fallbacks; package otelagent's
// Observer records them as spans. ObserveMemory is called synchronously,
// from the goroutine that did the work, concurrently for concurrent work:
// it must be safe for that and return quickly. ctx is the context of the
// call that did the work (for a search from a run, the run's).
type Observer interface {
	ObserveMemory(ctx context.Context, e *Event)
}

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(ctx context.Context, e *Event)

// ObserveMemory calls f(ctx, e).
func (f ObserverFunc) ObserveMemory(ctx context.Context, e *Event) { f(ctx, e) }

// Observers returns an Observer that hands each event to each of obs, in
// order; nil ones are skipped.
func Observers(obs ...Observer) Observer {
	var list multiObserver
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	return list
}

type multiObserver []Observer

func (m multiObserver) ObserveMemory(ctx context.Context, e *Event) {
	for _, o := range m {
		o.ObserveMemory(ctx, e)
	}
}
