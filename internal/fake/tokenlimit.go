package fake

import "fmt"

// SetInputTokenLimit makes the server refuse a request whose prompt is
// larger than n tokens, counted as the usageMetadata.promptTokenCount of
// its answer would be (see usage.go), with the API's 400 INVALID_ARGUMENT
// "The input token count (N) exceeds the maximum number of tokens allowed
// (n)." It applies to every model; 0, the default, sets no limit. A test
// sets a small limit to prove that long conversations stay under it.
func (s *Server) SetInputTokenLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inputTokenLimit = max(n, 0)
}

func (s *Server) tokenLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inputTokenLimit
}

func checkInputTokens(in *input) *APIError {
	if in.inputTokenLimit <= 0 {
		return nil
	}
	var u usageCounter
	u.prompt(in.req)
	if n := int(tokens(u.promptBytes)); n > in.inputTokenLimit {
		return invalidArgument(fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, in.inputTokenLimit))
	}
	return nil
}
