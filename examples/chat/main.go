// The chat command is a terminal chat with Gemini that can call tools: the
// (made-up) weather, the time in a time zone, and arithmetic.
//
// Usage:
//
//	go run ./examples/chat [-model gemini-3.5-flash] [-v] [-trace]
//
// With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the Gemini API.
// Without one it runs on a built-in offline model, served by an in-process
// fake of the API, which answers through the same agent loop, HTTP client
// and real tool calls; it understands questions like "What's the weather in
// Paris and Tokyo?", "what time is it in UTC" and "what is (12+7)*3".
//
// It streams the answer as it is generated and shows each tool call and its
// result. Type /help for the commands. Ctrl-C stops the answer in progress;
// Ctrl-C at the prompt, or Ctrl-D, exits. When standard input is not a
// terminal, each line is one message:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat
//
// With -trace, each answer is traced with OpenTelemetry (package otelagent,
// and otelhttp around the client's HTTP transport) and its span tree is
// printed to standard error: the run, each model call with its HTTP
// request, each tool call with the spans the tool starts, one per line
// with its duration and key attributes. With OTEL_EXPORTER_OTLP_ENDPOINT
// set, the spans and metrics are exported over OTLP/HTTP instead (to a
// collector, Jaeger, Tempo…), configured by the standard OTEL_EXPORTER_OTLP_*
// and OTEL_SERVICE_NAME variables:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat -trace
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/chat -trace
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
)

func main() {
	opts := options{}
	flag.StringVar(&opts.model, "model", defaultModel, "Gemini model to use with an API key")
	flag.BoolVar(&opts.verbose, "v", false, "show thoughts and a usage line after each answer")
	flag.BoolVar(&opts.trace, "trace", false, "print each answer's span tree to stderr (with OTEL_EXPORTER_OTLP_ENDPOINT set: export over OTLP/HTTP instead)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: chat [-model name] [-v] [-trace]\n\n"+
			"Chats with Gemini when GEMINI_API_KEY or GOOGLE_API_KEY is set, with a built-in offline model otherwise.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	opts.apiKey = os.Getenv("GEMINI_API_KEY")
	if opts.apiKey == "" {
		opts.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	opts.interactive = isTerminal(os.Stdin)
	opts.color = isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"

	// genai writes stream hiccups ("Error context canceled" when an answer
	// is stopped) to the standard logger; they would garble the chat.
	log.SetOutput(io.Discard)

	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	opts.interrupts = interrupts

	if err := run(context.Background(), opts, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
