package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
)

// Listing one owner's conversations in a file of 100,000 (1,000 owners of
// 100 each): the index range of the owner's prefix, against the whole
// store's List kept to the owner's (what agentserver's Threads did).
func BenchmarkListOwner(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const owners, each = 1000, 100
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for o := range owners {
		for c := range each {
			n := int64(o*each + c)
			if _, err := tx.ExecContext(ctx, "INSERT INTO conversations (id, created, updated, length, bytes) VALUES (?, ?, ?, 4, 6000)",
				fmt.Sprintf("agentserver/user%d/thread-%d", o, c), n, n); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	const prefix = "agentserver/user500/"
	b.Run("ListPage", func(b *testing.B) {
		for b.Loop() {
			if p, err := s.ListPage(ctx, session.ListOptions{Prefix: prefix}); err != nil || len(p.Infos) != each {
				b.Fatal(len(p.Infos), err)
			}
		}
	})
	b.Run("Usage", func(b *testing.B) {
		for b.Loop() {
			if u, err := s.Usage(ctx, prefix); err != nil || u.Conversations != each {
				b.Fatal(u, err)
			}
		}
	})
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			all, err := s.List(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, info := range all {
				if strings.HasPrefix(info.ID, prefix) {
					n++
				}
			}
			if n != each {
				b.Fatal(n)
			}
		}
	})
}
