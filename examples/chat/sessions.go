package main

// Where the chat keeps its conversations: in memory, or, with -session, in
// a SQLite file or a PostgreSQL database that outlives the process. Each conversation has a name;
// /new starts another, /sessions lists them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/stores"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// conversations is the chat's store and the conversation it is in.
type conversations struct {
	store session.Store
	name  string
	path  string    // the SQLite file or the database's URL (without its password), with -session or -session-db
	close io.Closer // the file's or database's store, if any
}

// defaultName names the conversation when -session names none.
const defaultName = "chat"

// openConversations opens the store the options ask for: a SQLite file
// or a PostgreSQL database (a postgres:// URL) with -session or
// -session-db, else memory.
func openConversations(ctx context.Context, opts options) (*conversations, error) {
	name := opts.session
	if name == "" {
		name = defaultName
	}
	if opts.session == "" && opts.sessionDB == "" {
		return &conversations{store: session.NewMemory(), name: name}, nil
	}
	path := opts.sessionDB
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("finding a place for the sessions file (use -session-db): %w", err)
		}
		path = filepath.Join(dir, "toolnexus", "chat-sessions.db")
	}
	if !stores.IsURL(path) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
	}
	store, shown, err := stores.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &conversations{store: store, name: name, path: shown, close: store}, nil
}

// Close closes the store.
func (cs *conversations) Close() error {
	if cs.close == nil {
		return nil
	}
	return cs.close.Close()
}

// load returns the current conversation, empty if it has not begun.
func (cs *conversations) load(ctx context.Context) ([]*genai.Content, error) {
	contents, err := cs.store.Load(ctx, cs.name)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	return contents, err
}

// reset forgets the current conversation.
func (cs *conversations) reset(ctx context.Context) error {
	if err := cs.store.Delete(ctx, cs.name); err != nil && !errors.Is(err, session.ErrNotFound) {
		return err
	}
	return nil
}

// start switches to the conversation named name, or, without a name, to
// a new one named after the current one: "chat-2", "chat-3"…
func (cs *conversations) start(ctx context.Context, name string) error {
	if name != "" {
		cs.name = name
		return nil
	}
	base := cs.name
	if i := strings.LastIndexByte(base, '-'); i > 0 {
		if _, err := strconv.Atoi(base[i+1:]); err == nil {
			base = base[:i]
		}
	}
	// The names taken are those the store lists under base + "-".
	taken := map[string]bool{}
	opts := session.ListOptions{Prefix: base + "-", Limit: session.MaxPageSize}
	for {
		page, err := session.ListPage(ctx, cs.store, opts)
		if err != nil {
			return err
		}
		for _, info := range page.Infos {
			taken[info.ID] = true
		}
		if opts.Cursor = page.Next; opts.Cursor == "" {
			break
		}
	}
	for n := 2; ; n++ {
		if name := fmt.Sprintf("%s-%d", base, n); !taken[name] && name != cs.name {
			cs.name = name
			return nil
		}
	}
}

// list writes the stored conversations, the most recent first (a page of
// them: session.DefaultPageSize), the current one marked.
func (cs *conversations) list(ctx context.Context, out io.Writer, st style) error {
	usage, err := session.UsageOf(ctx, cs.store, "")
	if err != nil {
		return err
	}
	page, err := session.ListPage(ctx, cs.store, session.ListOptions{})
	if err != nil {
		return err
	}
	infos := page.Infos
	where := "in memory"
	if cs.path != "" {
		where = "in " + cs.path
	}
	plural := "s"
	if usage.Conversations == 1 {
		plural = ""
	}
	shown := ""
	if page.Next != "" {
		shown = fmt.Sprintf(", the latest %d shown", len(infos))
	}
	fmt.Fprintln(out, st.dim(fmt.Sprintf("(%d conversation%s %s%s)", usage.Conversations, plural, where, shown)))
	current := false
	for _, info := range infos {
		mark := " "
		if info.ID == cs.name {
			mark, current = "*", true
		}
		fmt.Fprintf(out, "%s %-20s %3d contents, last %s\n", mark, info.ID, info.Len, info.Updated.Format(time.DateTime))
	}
	if !current {
		fmt.Fprintf(out, "* %-20s (new)\n", cs.name)
	}
	return nil
}
