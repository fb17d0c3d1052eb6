// The temporalserver command starts a complete Temporal server in its
// process, for the fleet's instances on one machine (docs/fleet.md):
// SQLite in memory, loopback ports only, nothing downloaded. Once it
// serves, it prints one line,
//
//	temporal 127.0.0.1:PORT namespace NS
//
// its frontend's address and its namespace, and it serves until it is
// interrupted (SIGINT, SIGTERM).
//
//	go -C temporalagent/examples build -o /tmp/ ./fleet ./temporalserver
//	/tmp/temporalserver > /tmp/temporal.txt &
//
// It is a command of its own, not a flag of the fleet's: a Temporal server
// is most of what this module compiles (about 1,100 of the 1,800 packages
// the two commands take together), and an instance of the fleet, which
// examples/server -temporal builds and runs, needs only the SDK's client
// and worker.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: temporalserver (it takes no arguments; it prints \"temporal HOST:PORT namespace NS\" once it serves)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, os.Stdout); err != nil {
		slog.Error("temporalserver: " + err.Error())
		os.Exit(1)
	}
}

// serve runs a Temporal server until ctx is done, and prints its
// frontend's address and namespace once it serves.
func serve(ctx context.Context, out io.Writer) error {
	ts, err := devtemporal.Start(nil)
	if err != nil {
		return err
	}
	defer ts.Stop()
	fmt.Fprintf(out, "temporal %s namespace %s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	<-ctx.Done()
	return nil
}
