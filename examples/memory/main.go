// The memory command shows an agent that remembers a user across
// conversations, and measures memory search on LoCoMo.
//
// Usage:
//
//	go run ./examples/memory -locomo FILE...   # recall of memory search on LoCoMo conversations
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
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toolnexus/toolnexus-go/memory"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	locomo := fs.Bool("locomo", false, "measure search recall on the LoCoMo conversation files given as arguments")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *locomo {
		if fs.NArg() == 0 {
			return fmt.Errorf("-locomo needs conversation files, e.g. ../shared/locomo/26.json")
		}
		return runLoCoMo(ctx, w, fs.Args(), func() (*memory.Service, func(), error) {
			svc, err := memory.New(memory.Config{})
			if err != nil {
				return nil, nil, err
			}
			return svc, func() { svc.Close(context.Background()) }, nil
		})
	}
	return fmt.Errorf("nothing to do: try -locomo ../shared/locomo/26.json ../shared/locomo/30.json")
}
