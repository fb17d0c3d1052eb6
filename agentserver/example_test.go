package agentserver_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The Go API a protocol or a development UI builds on: submit a message to
// a user's thread, read the run's log, look the run and the thread up.
func ExampleServer_Submit() {
	model := fake.NewServer() // in a program: a genai client's Models
	defer model.Close()
	model.Enqueue(fake.Text("Hello! How can I help?"))
	a, _ := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview"})
	srv, _ := agentserver.New(agentserver.Config{Agent: a})
	defer srv.Close(context.Background())
	ctx := context.Background()

	att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Hi", genai.RoleUser)})
	if err != nil {
		fmt.Println(err)
		return
	}
	cur := att.Cursor // the run's log, from its start
	defer cur.Close()
	for {
		rec, ok, err := cur.Next(ctx, time.Minute)
		if err != nil || !ok {
			break
		}
		fmt.Println(strings.TrimSpace(fmt.Sprint(rec.Offset, " ", rec.Kind, " ", rec.Text)))
		if rec.Kind == agentserver.KindDone {
			fmt.Println(rec.Done.State, rec.Done.Text)
			break
		}
	}
	history, _ := srv.History(ctx, "alice", "t1")
	fmt.Println(len(history), "contents stored")
	_, err = srv.History(ctx, "bob", "t1")
	fmt.Println(err)
	// Output:
	// 0 start
	// 1 step
	// 2 text Hello! How can I help?
	// 3 step-end
	// 4 done
	// done Hello! How can I help?
	// 2 contents stored
	// thread "t1" not found
}
