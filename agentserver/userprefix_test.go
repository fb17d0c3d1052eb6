package agentserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// UserPrefix starts the store id of every thread of its user, and no
// user's prefix starts another's: a Runner lists a user's runs under it
// without reaching another's. A user the server would not take is an
// error.
func TestUserPrefix(t *testing.T) {
	users := []string{"a", "ab", "a/b", "a%2Fb", "a b", "ünï", "../a"}
	prefixes := map[string]string{}
	for _, u := range users {
		p, err := agentserver.UserPrefix(u)
		if err != nil {
			t.Fatalf("UserPrefix(%q): %v", u, err)
		}
		prefixes[u] = p
	}
	for u, p := range prefixes {
		for v, q := range prefixes {
			if u != v && strings.HasPrefix(q, p) {
				t.Errorf("the prefix of %q, %q, starts that of %q, %q", u, p, v, q)
			}
		}
	}
	for _, bad := range []string{"", strings.Repeat("u", 257), "\xff"} {
		if _, err := agentserver.UserPrefix(bad); err == nil {
			t.Errorf("UserPrefix(%q): no error", bad)
		}
	}

	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Text("Hi."))
	ctx := context.Background()
	att, err := h.srv.Submit(ctx, "a/b", agentserver.Request{Thread: "t", Message: genai.NewContentFromText("hello", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	att.Cursor.Close()
	h.awaitRun("a/b", att.Run.ID, over)
	page, err := session.ListPage(ctx, h.store, session.ListOptions{Prefix: prefixes["a/b"]})
	if err != nil || len(page.Infos) != 1 || page.Infos[0].ID != prefixes["a/b"]+"t" {
		t.Errorf("the threads under a/b's prefix: %v %+v", err, page.Infos)
	}
	if page, err := session.ListPage(ctx, h.store, session.ListOptions{Prefix: prefixes["a"]}); err != nil || len(page.Infos) != 0 {
		t.Errorf("the threads under a's prefix: %v %+v", err, page.Infos)
	}
}
