package geminiinteractions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
	"google.golang.org/genai/interactions/models/apierrors"
)

// An InteractionError is the error of a model call whose interaction
// ended without an answer the loop can read: failed (for a reason that is
// not one of generateContent's finish reasons), cancelled, or out of its
// budget. The loop does not retry it.
type InteractionError struct {
	// ID is the interaction's.
	ID string
	// Status is how it ended: "failed", "cancelled", "budget_exceeded"…
	Status string
	// Errors are the interaction's errors, as the API sent them.
	Errors []ErrorDetail
}

// ErrorDetail is one of an interaction's errors.
type ErrorDetail struct {
	Code    string // a string, such as "internal"
	Message string
}

func (e *InteractionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "geminiinteractions: interaction %s ended %s", e.ID, e.Status)
	for i, d := range e.Errors {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s: %s", sep, d.Code, d.Message)
	}
	return b.String()
}

// finishReasons are the finish reasons a failed interaction's error code
// may name, in lower case ("malformed_function_call"): the interaction is
// then the answer that ended so, as generateContent would have returned
// it, and the loop treats it as it treats that answer (a re-ask, a stop
// for safety…). content_blocked is SAFETY.
var finishReasons = []genai.FinishReason{
	genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonLanguage, genai.FinishReasonOther,
	genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent, genai.FinishReasonSPII,
	genai.FinishReasonMalformedFunctionCall, genai.FinishReasonImageSafety, genai.FinishReasonUnexpectedToolCall,
	genai.FinishReasonImageProhibitedContent, genai.FinishReasonNoImage, genai.FinishReasonImageRecitation,
	genai.FinishReasonImageOther, genai.FinishReasonTooManyToolCalls, "MISSING_THOUGHT_SIGNATURE",
}

// candidate returns the candidate the interaction ix makes with steps,
// the model's, and content, what they say: the grounding and citations
// of their text's annotations, and the finish reason its status says (completed and
// requires_action: STOP; incomplete, the output token limit reached:
// MAX_TOKENS, a cut answer; requires_continuation: CONTINUATION, which
// the loop continues), or the error it ended with.
func candidate(ix *iw.Interaction, steps []iw.Step, content *genai.Content) (*genai.Candidate, error) {
	c := &genai.Candidate{Content: content}
	g, citations := iw.Sources(steps)
	c.GroundingMetadata = g
	if citations != nil {
		c.CitationMetadata = &genai.CitationMetadata{Citations: citations}
	}
	switch ix.Status {
	case iw.StatusCompleted, iw.StatusRequiresAction:
		c.FinishReason = genai.FinishReasonStop
		return c, nil
	case iw.StatusIncomplete:
		c.FinishReason = genai.FinishReasonMaxTokens
		return c, nil
	case iw.StatusRequiresContinuation:
		c.FinishReason = genai.FinishReasonContinuation
		return c, nil
	case iw.StatusFailed:
		for _, e := range ix.Errors {
			code := strings.ToUpper(e.Code)
			if code == "CONTENT_BLOCKED" {
				code = string(genai.FinishReasonSafety)
			}
			if slices.Contains(finishReasons, genai.FinishReason(code)) {
				c.FinishReason, c.FinishMessage = genai.FinishReason(code), e.Message
				return c, nil
			}
		}
	}
	err := &InteractionError{ID: ix.ID, Status: ix.Status}
	if ix.Status == "" {
		err.Status = "with no status"
	}
	for _, e := range ix.Errors {
		err.Errors = append(err.Errors, ErrorDetail{Code: e.Code, Message: e.Message})
	}
	return nil, err
}

// apiErr is an API error as genai's: a genai.APIError (which the loop's
// retry policy reads, as it reads generateContent's) that also unwraps to
// the SDK's error.
type apiErr struct {
	api genai.APIError
	sdk error
}

func (e *apiErr) Error() string   { return "geminiinteractions: " + e.api.Error() }
func (e *apiErr) Unwrap() []error { return []error{e.api, e.sdk} }

// apiError returns err, an error of the Interactions SDK, as a genai.APIError
// with the HTTP status, the API's code (a string, in Status), its message
// and its details; a Retry-After header becomes the google.rpc.RetryInfo
// detail the loop's retry policy honours. Errors that are no answer of
// the API (a broken connection, a context done) are returned as they are.
func apiError(err error) error {
	var (
		res  *http.Response
		body []byte
	)
	var (
		createClient *apierrors.CreateInteractionClientError
		createServer *apierrors.CreateInteractionServerError
		getClient    *apierrors.GetInteractionByIDClientError
		getServer    *apierrors.GetInteractionByIDServerError
		validation   *apierrors.ResponseValidationError
		unknown      *apierrors.APIError
	)
	switch {
	case errors.As(err, &createClient):
		res = createClient.HTTPMeta.Response
	case errors.As(err, &createServer):
		res = createServer.HTTPMeta.Response
	case errors.As(err, &getClient):
		res = getClient.HTTPMeta.Response
	case errors.As(err, &getServer):
		res = getServer.HTTPMeta.Response
	case errors.As(err, &validation):
		res, body = validation.RawResponse, []byte(validation.Body)
	case errors.As(err, &unknown):
		res, body = unknown.RawResponse, []byte(unknown.Body)
	default:
		return err
	}
	if body == nil && res != nil && res.Body != nil {
		body, _ = io.ReadAll(res.Body) // the SDK left the body it read there
	}
	e := genai.APIError{Message: strings.TrimSpace(string(body))}
	if res != nil {
		e.Code = res.StatusCode
	}
	readError(&e, body)
	if res != nil && !hasRetryInfo(e.Details) {
		if d, ok := retryAfter(res.Header.Get("Retry-After")); ok {
			e.Details = append(e.Details, map[string]any{"@type": retryInfoType, "retryDelay": strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"})
		}
	}
	return &apiErr{api: e, sdk: err}
}

// readError reads the API's error JSON into e: the Interactions shape
// ({"error": {"code": "invalid_request", "message": …}}) or the google.rpc
// shape Google's front end sends ({"error": {"code": 403, "status":
// "PERMISSION_DENIED", …}}).
func readError(e *genai.APIError, body []byte) {
	var w struct {
		Error struct {
			Code    json.RawMessage  `json:"code"`
			Message string           `json:"message"`
			Status  string           `json:"status"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil {
		return
	}
	if w.Error.Message != "" {
		e.Message = w.Error.Message
	}
	e.Status, e.Details = w.Error.Status, w.Error.Details
	var code string
	if json.Unmarshal(w.Error.Code, &code) == nil {
		e.Status = code
	} else if n, err := strconv.Atoi(string(bytes.TrimSpace(w.Error.Code))); err == nil && e.Code == 0 {
		e.Code = n
	}
}

const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

func hasRetryInfo(details []map[string]any) bool {
	for _, d := range details {
		if d["@type"] == retryInfoType {
			return true
		}
	}
	return false
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if v = strings.TrimSpace(v); v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// statusCodes maps the string codes of the API's errors to HTTP statuses,
// for an error that comes as a stream event, without a status of its own.
var statusCodes = map[string]int{
	"invalid_request": 400, "invalid_argument": 400, "content_blocked": 400, "failed_precondition": 400,
	"unauthenticated": 401, "permission_denied": 403, "not_found": 404, "deadline_exceeded": 504,
	"aborted": 409, "resource_exhausted": 429, "rate_limit_exceeded": 429, "cancelled": 499,
	"internal": 500, "unimplemented": 501, "unavailable": 503, "overloaded": 503,
}

// eventError returns the error of a stream's error event.
func eventError(e *iw.Error) error {
	if e == nil {
		e = &iw.Error{Code: "unknown", Message: "the stream sent an error event without an error"}
	}
	code, ok := statusCodes[e.Code]
	if !ok {
		code = http.StatusInternalServerError
	}
	return &apiErr{api: genai.APIError{Code: code, Status: e.Code, Message: e.Message, Details: e.Details},
		sdk: errors.New("an error event in the stream")}
}

// blocked returns the response of a prompt the API refused for its
// content (400 content_blocked): a response whose prompt feedback says it
// was blocked, as generateContent answers one, so that the loop stops with
// the error it gives a blocked prompt.
func blocked(err error, model string) (*genai.GenerateContentResponse, bool) {
	var e genai.APIError
	if !errors.As(err, &e) || e.Status != "content_blocked" {
		return nil, false
	}
	return &genai.GenerateContentResponse{ModelVersion: model,
		PromptFeedback: &genai.GenerateContentResponsePromptFeedback{BlockReason: genai.BlockedReasonOther, BlockReasonMessage: e.Message}}, true
}
