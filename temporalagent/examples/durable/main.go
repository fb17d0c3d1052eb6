// The durable command answers questions like the chat example, with each
// question a durable agent run on Temporal: the model call and each tool
// call are activities, so a run survives the crash of the process that runs
// it and can move to another worker.
//
// Usage:
//
//	go -C temporalagent/examples/durable run . [-temporal host:port] [-worker | -client]
//
// With no flags it starts a complete Temporal server in this process
// (in-memory SQLite, loopback ports only), a worker holding the "weather"
// agent, and a client that starts a run for each line of standard input and
// prints its tool calls and answer:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go -C temporalagent/examples/durable run .
//
// -temporal host:port uses that Temporal cluster instead. -worker runs only
// a worker (on an embedded server without -temporal, whose address it
// prints), -client only the client, so that runs can be watched moving
// between worker processes: stop a worker in the middle of a run and start
// another.
//
// With GEMINI_API_KEY (or GOOGLE_API_KEY) set, the worker talks to the
// Gemini API; without one it uses a built-in offline model, served by an
// in-process fake of the API, which understands weather questions.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// options are the command's flags and environment.
type options struct {
	temporal  string // host:port of a cluster; empty starts one in this process
	namespace string
	queue     string
	worker    bool // only a worker
	client    bool // only the client
	model     string
	apiKey    string
}

// agentName is the name the worker registers the agent under.
const agentName = "weather"

func main() {
	var o options
	flag.StringVar(&o.temporal, "temporal", "", "`host:port` of a Temporal cluster (default: start one in this process)")
	flag.StringVar(&o.namespace, "namespace", "default", "Temporal namespace, with -temporal")
	flag.StringVar(&o.queue, "queue", "toolnexus-durable", "Temporal task queue")
	flag.BoolVar(&o.worker, "worker", false, "run only a worker")
	flag.BoolVar(&o.client, "client", false, "run only the client (the workers run elsewhere)")
	flag.StringVar(&o.model, "model", "gemini-3.5-flash", "Gemini model to use with an API key")
	flag.Parse()
	if flag.NArg() > 0 || (o.worker && o.client) || (o.client && o.temporal == "") {
		fmt.Fprintln(os.Stderr, "usage: durable [-temporal host:port] [-namespace ns] [-queue q] [-worker | -client] [-model name]\n"+
			"(-client needs -temporal: the workers and the server run elsewhere)")
		os.Exit(2)
	}
	o.apiKey = os.Getenv("GEMINI_API_KEY")
	if o.apiKey == "" {
		o.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	// genai logs to the standard logger; keep it off the answers.
	stdlog.SetOutput(io.Discard)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "durable:", err)
		os.Exit(1)
	}
}

// run runs the command until standard input ends or ctx is done.
func run(ctx context.Context, o options, in io.Reader, out, info io.Writer) error {
	hostPort, namespace := o.temporal, o.namespace
	if hostPort == "" {
		ts, err := startServer(nil)
		if err != nil {
			return err
		}
		defer ts.Stop()
		hostPort, namespace = ts.GetFrontendHostPort(), ts.GetDefaultNamespace()
		fmt.Fprintf(info, "Started a Temporal server in this process at %s (namespace %s).\n", hostPort, namespace)
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: namespace, Logger: quietLogger})
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", hostPort, err)
	}
	defer c.Close()

	if !o.client {
		a, closeModel, err := newAgent(o, info)
		if err != nil {
			return err
		}
		defer closeModel()
		w := worker.New(c, o.queue, worker.Options{})
		if err := temporalagent.Register(w, temporalagent.Agent{
			Name:  agentName,
			Agent: a,
			Tools: map[string]temporalagent.ToolOptions{"get_weather": {Idempotent: true}},
		}); err != nil {
			return err
		}
		if err := w.Start(); err != nil {
			return fmt.Errorf("starting the worker: %w", err)
		}
		defer w.Stop()
	}
	if o.worker {
		fmt.Fprintf(info, "Worker running on task queue %s; stop it with Ctrl-C.\n", o.queue)
		<-ctx.Done()
		return nil
	}
	return answer(ctx, temporalagent.NewClient(c, o.queue), in, out)
}

// newAgent returns the weather agent on Gemini, or on the offline model,
// and what closes the offline model's server.
func newAgent(o options, info io.Writer) (*agent.Agent, func(), error) {
	closeModel := func() {}
	var cfg *genai.ClientConfig
	model := o.model
	if o.apiKey != "" {
		cfg = &genai.ClientConfig{APIKey: o.apiKey, Backend: genai.BackendGeminiAPI}
	} else {
		srv := fake.NewServer()
		srv.SetReplyFunc(offlineModel)
		closeModel = srv.Close
		cfg, model = srv.ClientConfig(), offlineModelName
		fmt.Fprintln(info, "No GEMINI_API_KEY set: the worker runs on the built-in offline model.")
	}
	gc, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		closeModel()
		return nil, nil, err
	}
	a, err := agent.New(agent.Config{
		Models: gc.Models,
		Model:  model,
		Tools:  toolset.MustNew(weatherTool()),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(
			"You answer weather questions with the get_weather tool. Be brief.", genai.RoleUser)},
	})
	if err != nil {
		closeModel()
		return nil, nil, err
	}
	return a, closeModel, nil
}

// answer starts a durable run for each line of in, continuing the
// conversation, and prints each run's tool calls and answer.
func answer(ctx context.Context, ac *temporalagent.Client, in io.Reader, out io.Writer) error {
	var history []*genai.Content
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" {
			continue
		}
		contents := slices.Concat(history, []*genai.Content{genai.NewContentFromText(line, genai.RoleUser)})
		run, err := ac.Start(ctx, client.StartWorkflowOptions{}, agentName, contents)
		if err != nil {
			return err
		}
		res, err := run.Result(ctx)
		if ctx.Err() != nil {
			return nil
		}
		for _, t := range res.Turns {
			for _, r := range t.Results {
				fmt.Fprintf(out, "→ %s %s\n", r.Call.Name, compact(r.Call.Args))
				mark := "←"
				if r.IsError {
					mark = "✗"
				}
				fmt.Fprintf(out, "%s %s %s (%s)\n", mark, r.Call.Name, compact(r.Output), round(r.Duration))
			}
		}
		if err != nil {
			fmt.Fprintf(out, "The run %s failed: %v\n", run.ID(), err)
			continue
		}
		fmt.Fprintln(out, res.Text)
		history = res.History
	}
	return lines.Err()
}

// round rounds d for display: to the millisecond, or to the microsecond
// below one.
func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// compact renders v as one line of JSON.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
