package geminitest

import "testing"

// AssertComplete fails tb unless the conversation went as scripted: every
// queued reply was taken, no request was rejected for breaking the API's
// protocol, and no request found no reply. It reports each problem with
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
}
