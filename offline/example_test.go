package offline_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/offline"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The offline model calls the tools a question needs, then sums up what
// they returned.
func ExampleServer() {
	srv := offline.NewServer()
	defer srv.Close()

	type timeIn struct {
		Zone string `json:"timezone"`
	}
	clock := toolset.MustFunc("current_time", "The current time in an IANA time zone",
		func(ctx context.Context, in timeIn) (string, error) { return "12:00 in " + in.Zone, nil })
	client := srv.Client()
	res, err := agent.Run(context.Background(), agent.Config{Models: client.Models, Model: offline.Model,
		Tools: toolset.MustNew(clock)}, genai.Text("What time is it in UTC?"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	// Output: current_time: 12:00 in UTC
}
