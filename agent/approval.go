package agent

import (
	"sync"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An Approval is a call waiting for a decision, handed to a Stream
// consumer in an EventApproval event (see Config.NeedsApproval). The
// consumer decides with one of its methods before it asks for the next
// event: the loop goes on only then, so a consumer may take its time (ask
// a person, wait for a click in a browser). The first decision counts; a
// call left undecided when the consumer asks for the next event is denied,
// and one decided after that is not affected. Runs that end in the
// meantime (a done context, the consumer breaking out of its loop) run
// none of their pending calls. Its methods are safe for concurrent use.
//
//	for e, err := range a.Stream(ctx, contents) {
//		if e.Kind == agent.EventApproval {
//			if ask(e.Call) {
//				e.Approval.Approve()
//			} else {
//				e.Approval.Deny("the user said no")
//			}
//		}
//		…
//	}
type Approval struct {
	// Call is the call waiting, as the model sent it: read it, never
	// modify it.
	Call *genai.FunctionCall

	mu      sync.Mutex
	decided bool
	answer  *toolset.Result // nil: run the tool
	closed  bool            // decisions are no longer taken
}

// Approve lets the call run.
func (a *Approval) Approve() { a.decide(nil) }

// Deny refuses the call: the model receives {"error": reason}, as with the
// Interceptor's [Deny].
func (a *Approval) Deny(reason string) { a.decide(Deny(reason)) }

// Answer answers the call without running the tool: the model receives
// {"result": output}, as with the Interceptor's [Answer].
func (a *Approval) Answer(output any) { a.decide(Answer(output)) }

// Decided reports whether a decision was taken in time.
func (a *Approval) Decided() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.decided
}

func (a *Approval) decide(answer *toolset.Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed && !a.decided {
		a.decided, a.answer = true, answer
	}
}

// close ends the time for decisions and returns the one taken: ok is false
// when none was.
func (a *Approval) close() (answer *toolset.Result, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return a.answer, a.decided
}

// notApproved is the answer to a call nobody approved.
func notApproved(call *genai.FunctionCall, why string) *toolset.Result {
	return &toolset.Result{IsError: true, Err: ErrDenied,
		Output: "tool " + call.Name + " was not run: " + why}
}
