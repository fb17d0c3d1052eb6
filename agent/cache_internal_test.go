package agent

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genai"
)

// The API's answers about caches, as ../shared/notes/caching.md §5-6
// quotes them, and how the loop reads each.
func TestCacheErrorShapes(t *testing.T) {
	for _, c := range []struct {
		name                      string
		err                       error
		gone, missing, notCacheOK bool
	}{
		{"Gemini API, gone", genai.APIError{Code: 403, Status: "PERMISSION_DENIED", Message: "CachedContent not found (or permission denied)"}, true, true, false},
		{"Vertex AI generate, gone", genai.APIError{Code: 400, Status: "FAILED_PRECONDITION", Message: "Invalid resource state for cache content 1234."}, true, false, true},
		{"Vertex AI, expired (earlier)", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "Cache content 1234 is expired"}, true, false, true},
		{"Vertex AI get/patch, gone", genai.APIError{Code: 404, Status: "NOT_FOUND", Message: "Cached content 1234 is not found."}, true, true, true},
		{"another model's", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "Model used by GenerateContent request (models/a) and CachedContent (models/b) has to be the same."}, true, false, true},
		{"set beside the cache (Gemini API)", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config."}, true, false, true},
		{"too small (Gemini API)", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "Cached content is too small. total_token_count=416, min_total_token_count=4096"}, true, false, true},
		{"too small (Vertex AI)", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "The cached content is of 416 tokens. The minimum token count to start caching is 4096."}, true, false, true},
		{"a bad request of another kind", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "Please ensure that function response turn comes immediately after a function call turn."}, false, false, true},
		{"overloaded", genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded."}, false, false, false},
		{"wrapped", fmt.Errorf("calling: %w", genai.APIError{Code: 403, Message: "CachedContent not found (or permission denied)"}), true, true, false},
		{"not an API error", errors.New("connection reset"), false, false, false},
		{"a key without access", genai.APIError{Code: 403, Status: "PERMISSION_DENIED", Message: "Method doesn't allow unregistered callers."}, false, false, false},
	} {
		if got := cacheGone(c.err); got != c.gone {
			t.Errorf("%s: cacheGone = %v; want %v", c.name, got, c.gone)
		}
		if got := cacheMissing(c.err); got != c.missing {
			t.Errorf("%s: cacheMissing = %v; want %v", c.name, got, c.missing)
		}
		if got := notCacheable(c.err); got != c.notCacheOK {
			t.Errorf("%s: notCacheable = %v; want %v", c.name, got, c.notCacheOK)
		}
	}
}
