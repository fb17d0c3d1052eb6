// The fleet command serves examples/server's demo agent as one instance
// of a fleet: its runs are workflows on a Temporal server, its threads in
// a PostgreSQL database (or a SQLite file) that every instance shares, so
// that any request of any protocol reaches any instance, and an instance
// that stops (a deploy, a kill) loses no run.
//
// Usage:
//
//	go run ./fleet -temporal host:port -db postgres://… [-addr localhost:8080] [-queue toolnexus-fleet]
//		[-run-timeout 48h] [-approval-timeout 24h] [-sticky-timeout 1s] [-approve] [-cors origin]
//	go run ./temporalserver            # a Temporal server for the fleet, in its own process
//
// Each instance also runs a worker of the task queue, holding the agent
// and the store; it logs each tool call it runs ("tool call", with the
// tool's name and the call's id). Without -temporal it is
// examples/server, the single process server.
//
// -run-timeout bounds a served run, its waits for approvals included
// (temporalagent.RunnerConfig.RunTimeout): agentserver's default, 30
// minutes, suits a run that streams, not one whose approval waits for a
// person overnight. A fleet sets it to the longest a run may wait (48h
// here), and -approval-timeout to how long a call waits for its decision
// before it is denied and the run goes on (temporalagent.Agent's
// ApprovalTimeout; 0 waits until -run-timeout ends the run). Every
// instance of a fleet takes the same values.
//
// The flags live here because the root module never requires Temporal:
// examples/server -temporal builds and runs this command with its flags.
// It compiles Temporal's SDK, not its server (the temporalserver command
// of this module starts one), so that the instance builds in a fraction
// of the time (docs/fleet.md, "What it costs").
// docs/fleet.md says how to run a fleet on one machine, offline, and what
// a killed instance costs (-sticky-timeout).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// options configure an instance.
type options struct {
	serverapp.Options
	addr      string
	temporal  string // the Temporal server's frontend, host:port
	namespace string
	queue     string
	// sticky is the worker's sticky schedule-to-start timeout: how long
	// a workflow task (or a query) waits for the instance whose worker
	// last ran the workflow before any worker of the queue takes it.
	sticky time.Duration
	// runTimeout is the runs' RunTimeout, approvalTimeout the agent's
	// ApprovalTimeout on Temporal.
	runTimeout, approvalTimeout time.Duration
}

// DefaultStickyTimeout is the -sticky-timeout of an instance: shorter than
// the SDK's 5 s, so that a run whose instance was killed answers on
// another within about a second (see docs/fleet.md).
const DefaultStickyTimeout = time.Second

func main() {
	var opts options
	var movedTemporalServer bool
	flag.StringVar(&opts.addr, "addr", "localhost:8080", "listen on `host:port`")
	flag.StringVar(&opts.temporal, "temporal", "", "serve the runs on the Temporal server at `host:port` (default: in this process, as examples/server)")
	flag.StringVar(&opts.namespace, "namespace", "default", "the Temporal `namespace`")
	flag.StringVar(&opts.queue, "queue", "toolnexus-fleet", "the Temporal task `queue` of the fleet's workers")
	flag.DurationVar(&opts.sticky, "sticky-timeout", DefaultStickyTimeout, "how long a run's next step, or a read of its log, waits for the instance that last ran it (killed, say) before another takes it")
	flag.DurationVar(&opts.runTimeout, "run-timeout", 48*time.Hour, "with -temporal: bound each run, its waits for approvals included, to `duration` (negative: no bound)")
	flag.DurationVar(&opts.approvalTimeout, "approval-timeout", 24*time.Hour, "with -temporal: deny a call that waits longer than `duration` for its approval, and go on (0: wait until -run-timeout)")
	flag.BoolVar(&movedTemporalServer, "temporal-server", false, "no longer here: the temporalserver command of this module starts a Temporal server")
	flag.BoolVar(&opts.Approve, "approve", false, "get_weather needs approval")
	flag.StringVar(&opts.Model, "model", serverapp.DefaultModel, "Gemini model to use with an API key")
	flag.StringVar(&opts.LiveModel, "live-model", serverapp.DefaultLiveModel, "Gemini Live model of the voice sessions (/live), with an API key (offline: the offline model's)")
	flag.StringVar(&opts.DB, "db", "", "the threads' store: a postgres:// URL (or a SQLite `file`), shared by every instance")
	flag.Var(&opts.CORS, "cors", "let pages of this `origin` call the server; repeat it, or separate origins with commas")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if movedTemporalServer {
		fmt.Fprintln(os.Stderr, "fleet: -temporal-server moved to a command of its own, so that an instance does not compile a Temporal server: go -C temporalagent/examples run ./temporalserver")
		os.Exit(2)
	}
	opts.APIKey = os.Getenv("GEMINI_API_KEY")
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("GOOGLE_API_KEY")
	}
	log.SetOutput(io.Discard) // genai's stream hiccups
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		logger.Error("fleet: " + err.Error())
		os.Exit(1)
	}
}

// quietLogger drops the Temporal SDK's logs.
var quietLogger = tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// run serves one instance until ctx is done.
func run(ctx context.Context, opts options, logger *slog.Logger) error {
	if opts.temporal != "" {
		if opts.approvalTimeout < 0 {
			return fmt.Errorf("-approval-timeout %v is negative", opts.approvalTimeout)
		}
		if opts.DB == "" {
			return errors.New("-temporal needs -db: the instances of a fleet share one store")
		}
		if opts.sticky <= 0 {
			return fmt.Errorf("-sticky-timeout %v: it must be positive", opts.sticky)
		}
		opts.Runner = temporalRunner(opts, logger)
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return err
	}
	return serverapp.Serve(ctx, opts.Options, ln, logger)
}

// temporalRunner returns what makes the instance's Runner on Temporal, and
// its worker: the agent and the store, on the fleet's task queue.
func temporalRunner(opts options, logger *slog.Logger) func(context.Context, *agent.Agent, session.Store) (agentserver.Runner, func(), error) {
	return func(ctx context.Context, a *agent.Agent, store session.Store) (agentserver.Runner, func(), error) {
		j, ok := store.(session.Journaler)
		if !ok {
			return nil, nil, fmt.Errorf("the store %T keeps no journals", store)
		}
		c, err := client.DialContext(ctx, client.Options{HostPort: opts.temporal, Namespace: opts.namespace, Logger: quietLogger})
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to Temporal at %s: %w", opts.temporal, err)
		}
		w := worker.New(c, opts.queue, worker.Options{StickyScheduleToStartTimeout: opts.sticky})
		logged := a.With(agent.Overrides{Observer: toolLog(logger)})
		err = errors.Join(temporalagent.Register(w, temporalagent.Agent{Name: "demo", Agent: logged, ApprovalTimeout: opts.approvalTimeout}), temporalagent.RegisterStore(w, j))
		if err == nil {
			err = w.Start()
		}
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		r, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: opts.queue, Agent: "demo", Store: j,
			RunTimeout: opts.runTimeout})
		if err != nil {
			w.Stop()
			c.Close()
			return nil, nil, err
		}
		logger.Info("serving through Temporal", "temporal", opts.temporal, "queue", opts.queue, "sticky_timeout", opts.sticky,
			"run_timeout", opts.runTimeout, "approval_timeout", opts.approvalTimeout)
		return r, func() { w.Stop(); c.Close() }, nil
	}
}

// toolLog returns an Observer that logs each tool call the instance's
// worker runs, when it starts: one line per attempt, so that a call run
// again elsewhere (its worker lost) shows in both instances' logs. Calls
// answered without running (denied, unknown) are not logged.
func toolLog(logger *slog.Logger) agent.Observer {
	return agent.ObserverFunc(func(ctx context.Context, e *agent.Event) {
		if e.Kind == agent.EventToolCall && e.Tool != nil {
			logger.InfoContext(ctx, "tool call", "tool", e.Call.Name, "call", e.Call.ID)
		}
	})
}
