// The openapi command shows the tools package openapitools makes of an
// OpenAPI description (Swagger 2.0, OpenAPI 3.0 or 3.1, JSON or YAML), and
// calls them.
//
// Usage:
//
//	go run ./examples/openapi -spec FILE|URL -list [-search]
//	go run ./examples/openapi -spec FILE|URL -call NAME [-args JSON] [-base URL] [-auth SCHEME=SECRET]...
//
// -list prints one JSON line per tool, {"name": …, "declaration": …}, the
// declaration as the Gemini API receives it (a genai FunctionDeclaration),
// then a last line operations=N tools=M skipped=K; the reason each skipped
// operation has no tool goes to standard error. With -search it lists the
// two tools of the search mode instead, for APIs too large to declare
// whole:
//
//	go run ./examples/openapi -spec openapitools/testdata/shop31.yaml -list
//
// -call makes the request of one tool, with the arguments -args gives, to
// the server the description names or to -base, and prints the answer
// the model would get: {"result": {"status": …, "body": …}}, or
// {"error": …} for a call that was refused or got no answer:
//
//	go run ./examples/openapi -spec openapitools/testdata/shop31.yaml -call listItems \
//		-args '{"tags": ["red"]}' -base http://localhost:8080 -auth key=SECRET
//
// -auth supplies the credential of a security scheme, read by its kind:
// an apiKey's key, http basic's user:password, a bearer, OAuth2 or OpenID
// Connect token. -tag and -method keep only the operations with one of the
// tags, or one of the methods (comma-separated).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "openapi:", err)
		}
		os.Exit(2)
	}
}

// listFlag is a repeatable flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ", ") }
func (f *listFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("spec", "", "the OpenAPI description: a `file`, or an http(s) URL")
	list := fs.Bool("list", false, "print each tool's name and declaration, one JSON line each, then operations=N tools=M skipped=K")
	search := fs.Bool("search", false, "with -list: the search mode's two tools instead of one per operation")
	call := fs.String("call", "", "call the tool `name`d, and print the answer the model would get")
	callArgs := fs.String("args", "{}", "the call's arguments, a JSON object")
	base := fs.String("base", "", "send calls to this base `URL` instead of the description's server")
	tags := fs.String("tag", "", "keep only the operations with one of these comma-separated `tags`")
	methods := fs.String("method", "", "keep only the operations with one of these comma-separated `methods`")
	var auth listFlag
	fs.Var(&auth, "auth", "a security scheme's credential, `scheme=secret` (repeatable): an API key, user:password, or a token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *spec == "" || *list == (*call != "") || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("give -spec, and one of -list and -call")
	}
	opts := &openapitools.Options{BaseURL: *base, Secrets: map[string]string{}}
	for _, a := range auth {
		name, secret, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return fmt.Errorf("-auth %q: want scheme=secret", a)
		}
		opts.Secrets[name] = secret
	}
	if *tags != "" {
		opts.Tags = strings.Split(*tags, ",")
	}
	if *methods != "" {
		opts.Methods = strings.Split(*methods, ",")
	}
	var api *openapitools.API
	var err error
	if strings.HasPrefix(*spec, "http://") || strings.HasPrefix(*spec, "https://") {
		api, err = openapitools.ParseURL(ctx, *spec, opts)
	} else {
		api, err = openapitools.ParseFile(ctx, *spec, opts)
	}
	if err != nil {
		return err
	}
	if *list {
		return listTools(api, *search, stdout, stderr)
	}
	return callTool(ctx, api, *call, *callArgs, stdout)
}

// listTools prints each tool's declaration, and the reason of each
// operation without one.
func listTools(api *openapitools.API, search bool, stdout, stderr io.Writer) error {
	tools := api.Tools()
	if search {
		tools = api.SearchTools()
	}
	enc := json.NewEncoder(stdout)
	for _, t := range tools {
		d, err := geminiadapter.Declaration(t)
		if err != nil {
			return err
		}
		line := struct {
			Name        string                     `json:"name"`
			Declaration *genai.FunctionDeclaration `json:"declaration"`
		}{t.Name, d}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	skipped := api.Skipped()
	for _, op := range skipped {
		fmt.Fprintf(stderr, "skipped %s (%s %s): %v\n", op.Name, op.Method, op.Path, op.Err)
	}
	_, err := fmt.Fprintf(stdout, "operations=%d tools=%d skipped=%d\n", len(api.Operations()), len(api.Tools()), len(skipped))
	return err
}

// callTool makes one tool's call and prints the function response the
// model would read.
func callTool(ctx context.Context, api *openapitools.API, name, rawArgs string, stdout io.Writer) error {
	var args map[string]any
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
		return fmt.Errorf("-args: not a JSON object: %w", err)
	}
	var tool *toolset.Tool
	if op, ok := api.Lookup(name); ok && op.Tool != nil {
		tool = op.Tool
	} else if ok {
		return fmt.Errorf("%s has no tool: %w", name, op.Err)
	}
	for _, t := range api.SearchTools() {
		if t.Name == name {
			tool = t
		}
	}
	if tool == nil {
		return fmt.Errorf("no tool %q (see -list)", name)
	}
	call := &genai.FunctionCall{Name: name, Args: args}
	part := geminiadapter.Response(call, tool.Execute(ctx, args))
	out, err := json.MarshalIndent(part.FunctionResponse.Response, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
