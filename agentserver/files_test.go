package agentserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// withFile is a new message that names the file at uri.
func withFile(uri string) *genai.Content {
	return genai.NewContentFromParts([]*genai.Part{genai.NewPartFromText("What is this?"), genai.NewPartFromURI(uri, "application/pdf")}, genai.RoleUser)
}

// Submit refuses a message that names a file by URI (the model would read
// it with the server's credentials) unless Config.AllowFileURI allows the
// user that URI: with ErrBadRequest and the check's error, or the check's
// *Error as it is.
func TestAllowFileURI(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	_, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: withFile("gs://files/alice/a.pdf")})
	var e *agentserver.Error
	if !errors.Is(err, agentserver.ErrBadRequest) || !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != "bad_part" {
		t.Errorf("without AllowFileURI: %v, want 400 bad_part", err)
	}

	errNotYours := errors.New("not a file of yours")
	unavailable := &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "files_unavailable", Message: "the file index is down"}
	h = newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
		c.AllowFileURI = func(_ context.Context, user, uri string) error {
			switch {
			case uri == "gs://files/down":
				return unavailable
			case strings.HasPrefix(uri, "gs://files/"+user+"/"):
				return nil
			}
			return errNotYours
		}
	}})
	_, err = h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: withFile("gs://files/bob/a.pdf")})
	if !errors.Is(err, agentserver.ErrBadRequest) || !errors.Is(err, errNotYours) || !errors.As(err, &e) || e.Code != "bad_part" || strings.Contains(e.Message, errNotYours.Error()) {
		t.Errorf("another user's file: %v, want 400 bad_part wrapping the check's error, which it does not show", err)
	}
	if _, err = h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: withFile("gs://files/down")}); !errors.As(err, &e) || e != unavailable {
		t.Errorf("a check that failed with an *Error: %v, want that error", err)
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}

	h.model.Enqueue(fake.Text("A report."))
	att, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: withFile("gs://files/alice/a.pdf")})
	if err != nil {
		t.Fatal(err)
	}
	att.Cursor.Close()
	h.awaitRun("alice", att.Run.ID, over)
	if p := h.model.LastRequest().Contents[0].Parts[1]; p.FileData == nil || p.FileData.FileURI != "gs://files/alice/a.pdf" {
		t.Errorf("the model got %+v", p)
	}
}
