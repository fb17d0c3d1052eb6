package geminitest

import "testing"

// AssertComplete fails tb unless the conversation went as scripted: every
// queued reply was taken, no request or Live message was rejected for
// breaking the API's protocol, and none found no reply. It reports each problem with
// tb.Errorf and does not stop the test.
func (s *Server) AssertComplete(tb testing.TB) {
	tb.Helper()
	for _, r := range s.Rejections() {
		tb.Errorf("geminitest: request #%d broke the protocol (rule %s): %d %s", r.Seq, r.Rule, r.Err.Code, r.Err.Message)
	}
	for _, r := range s.Requests() {
		if r.Unscripted {
			tb.Errorf("geminitest: request #%d (%s %s) found no scripted reply", r.Seq, r.Method, r.Model)
		}
	}
	if n := s.Pending(); n > 0 {
		tb.Errorf("geminitest: %d scripted replies were never requested", n)
	}
	for _, m := range s.LiveMessages() {
		switch {
		case m.Rejection != nil:
			tb.Errorf("geminitest: live message #%d broke the protocol (rule %s): %d %s", m.Seq, m.Rejection.Rule, m.Rejection.Code, m.Rejection.Reason)
		case m.Unscripted:
			tb.Errorf("geminitest: live message #%d (session %s) found no scripted reply", m.Seq, m.Session)
		}
	}
	if n := s.PendingLive(); n > 0 {
		tb.Errorf("geminitest: %d scripted live replies were never taken", n)
	}
}
