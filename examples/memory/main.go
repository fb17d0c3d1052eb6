// The memory command shows an agent that remembers a user across
// conversations, and measures memory search on the LoCoMo benchmark.
//
// Usage:
//
//	go run ./examples/memory [-db WHERE] [-model M]                 # the demo
//	go run ./examples/memory -locomo [-db WHERE] [-embed MODEL] FILE...
//
// Without -locomo it runs a short demo: a user tells the agent something
// in one conversation, and asks in another; the memories the second run
// was given are printed before its answer. With GEMINI_API_KEY (or
// GOOGLE_API_KEY) set the agent is Gemini (-model, gemini-2.5-flash by
// default); without one, a scripted model served by the package
// geminitest's fake answers from the memories it is given.
//
// With -locomo, each file is a conversation of the LoCoMo benchmark
// ("Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL
// 2024; two are in ../shared/locomo): each is ingested as one user's
// memories, each dialog turn a memory of its session (with its speaker,
// the session's date and the caption of the photo it shares), and each
// question of categories 1 to 4 that has evidence is asked. It prints a
// line per file, then the recall of all:
//
//	recall@5=0.xxx recall@10=0.xxx questions=N
//
// where recall@k is the share of a question's evidence turns among the
// first k results, averaged over questions.
//
// -db keeps the memories in a SQLite file (a path) or a PostgreSQL
// database (a postgres:// URL) rather than in memory; a LoCoMo user's
// memories there are forgotten before the file is ingested again.
//
// -embed MODEL makes search hybrid, with embeddings of MODEL
// (gemini-embedding-001, say): Gemini's with a key, which measures what
// real embeddings add; without one, the fake's, whose vectors stand for
// words, not meaning, which runs hybrid search end to end offline.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/pgmemory"
	"github.com/toolnexus/toolnexus-go/memory/sqlitememory"
	"google.golang.org/genai"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

type options struct {
	locomo bool
	db     string
	embed  string
	model  string
	apiKey string
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	var o options
	fs.BoolVar(&o.locomo, "locomo", false, "measure search recall on the LoCoMo conversation files given as arguments")
	fs.StringVar(&o.db, "db", "", "keep memories in this SQLite file or PostgreSQL URL (default: in memory)")
	fs.StringVar(&o.embed, "embed", "", "hybrid search, with embeddings of this model (Gemini's with a key, the fake's without)")
	fs.StringVar(&o.model, "model", "gemini-2.5-flash", "the demo's model, with a key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.apiKey = os.Getenv("GEMINI_API_KEY")
	if o.apiKey == "" {
		o.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	var fake *geminitest.Server
	client := func() (*genai.Client, error) {
		if o.apiKey != "" {
			return genai.NewClient(ctx, &genai.ClientConfig{APIKey: o.apiKey, Backend: genai.BackendGeminiAPI})
		}
		if fake == nil {
			fake = geminitest.NewServer()
		}
		return fake.Client(), nil
	}
	defer func() {
		if fake != nil {
			fake.Close()
		}
	}()
	store, closeStore, err := openStore(ctx, o.db)
	if err != nil {
		return err
	}
	defer closeStore()
	cfg := memory.Config{Store: store, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if o.embed != "" {
		c, err := client()
		if err != nil {
			return err
		}
		cfg.Embedder = &memory.GeminiEmbedder{Models: c.Models, Model: o.embed}
		if o.apiKey == "" {
			fmt.Fprintln(w, "(embeddings from the offline fake: they stand for words, not meaning; set GEMINI_API_KEY for Gemini's)")
		}
	}
	if o.locomo {
		if fs.NArg() == 0 {
			return fmt.Errorf("-locomo needs conversation files, e.g. ../shared/locomo/26.json")
		}
		return runLoCoMo(ctx, w, fs.Args(), cfg)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("arguments without -locomo: %q", fs.Args())
	}
	c, err := client()
	if err != nil {
		return err
	}
	if fake != nil {
		fake.SetReplyFunc(offlineModel)
	}
	return demo(ctx, w, c, o.model, cfg)
}

// openStore opens the memory store where names: in memory for "", a
// PostgreSQL database for a URL, else a SQLite file.
func openStore(ctx context.Context, where string) (memory.Store, func(), error) {
	switch {
	case where == "":
		return memory.NewStore(), func() {}, nil
	case strings.HasPrefix(where, "postgres://"), strings.HasPrefix(where, "postgresql://"):
		s, err := pgmemory.Open(ctx, where)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	}
	s, err := sqlitememory.Open(ctx, where)
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}
