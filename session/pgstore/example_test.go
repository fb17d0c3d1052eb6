package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"google.golang.org/genai"
)

// A conversation kept in PostgreSQL, listed by owner: ids that start with
// "alice/" are alice's. (It needs a server: it has no Output to check.)
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL")) // postgres://user:password@host/db
	if err != nil {
		log.Fatal(err) // the error never holds the password
	}
	defer store.Close()

	if err := store.Append(ctx, "alice/trip", genai.Text("What's the weather in Paris?")); err != nil {
		log.Fatal(err)
	}
	page, err := store.ListPage(ctx, session.ListOptions{Prefix: "alice/", Limit: 20})
	if err != nil {
		log.Fatal(err)
	}
	for _, info := range page.Infos {
		fmt.Printf("%s: %d contents, %d bytes, updated %s\n", info.ID, info.Len, info.Bytes, info.Updated.Format("15:04"))
	}
	usage, err := store.Usage(ctx, "alice/")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("alice keeps %d conversations, %d bytes\n", usage.Conversations, usage.Bytes)
}
