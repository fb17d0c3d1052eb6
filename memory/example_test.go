package memory_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
	"google.golang.org/genai"
)

func Example() {
	ctx := context.Background()
	svc, err := memory.New(memory.Config{Now: func() time.Time { return time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	defer svc.Close(ctx)

	// After a run: the thread's new messages.
	thread := []*genai.Content{
		genai.NewContentFromText("I just adopted a ginger cat called Miso.", genai.RoleUser),
		genai.NewContentFromText("Congratulations! Miso is a lovely name.", genai.RoleModel),
	}
	svc.IngestThread(ctx, "alice", "monday", thread, 0)
	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice is vegetarian."})
	svc.Remember(ctx, "bob", memory.Fact{Text: "Bob's cat is called Felix."})

	res, err := svc.Search(ctx, "alice", "Which cat did I adopt?", &memory.SearchOptions{Limit: 2})
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("%s (%s, %s, message %d of %q)\n", r.Text, r.Author, r.Time.Format("2 Jan 2006"), r.Message, r.Thread)
	}
	// Output:
	// I just adopted a ginger cat called Miso. (user, 4 May 2026, message 0 of "monday")
	// Congratulations! Miso is a lovely name. (model, 4 May 2026, message 1 of "monday")
}

func ExampleService_ForgetUser() {
	ctx := context.Background()
	svc, _ := memory.New(memory.Config{})
	defer svc.Close(ctx)
	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice's locker code is 4921."})
	svc.ForgetUser(ctx, "alice")
	res, _ := svc.Search(ctx, "alice", "locker code", nil)
	fmt.Println(len(res), "memories")
	// Output: 0 memories
}

func ExampleBlock() {
	res := []memory.Result{{Memory: memory.Memory{Text: "I'm allergic to peanuts.", Author: "user",
		Time: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}}}
	fmt.Print(memory.Block(res, 0))
	// Output:
	// [Memories of earlier conversations with this user, the most relevant first. Use them where they help; they may be out of date.]
	// - 2 March 2026, user: I'm allergic to peanuts.
}
