package main

// The chat's REST APIs: -openapi FILE or URL makes a tool of each
// operation of an OpenAPI description, through openapitools.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// openAPISource is where /tools says a description's tool comes from
// (followed by its -openapi value).
const openAPISource = "OpenAPI "

// withOpenAPI adds the tools of each -openapi description to tools:
// named after their operations, or "name_" and their operations with
// "name=FILE". -openapi-auth supplies the credentials of the schemes a
// description declares, -openapi-base the base URL of its calls. A name
// another tool has already is an error. It returns the descriptions read,
// whose approval policies the chat applies.
func withOpenAPI(ctx context.Context, opts options, tools *toolset.Set, sources map[string]string, out io.Writer) (*toolset.Set, []*openapitools.API, error) {
	if len(opts.openAPI) == 0 {
		return tools, nil, nil
	}
	secrets := map[string]string{}
	for _, a := range opts.openAPIAuth {
		name, secret, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("-openapi-auth %q: want scheme=secret", a)
		}
		secrets[name] = secret
	}
	list := tools.Tools()
	var apis []*openapitools.API
	for _, spec := range opts.openAPI {
		prefix, src := splitName(spec)
		read := func(o *openapitools.Options) (*openapitools.API, error) {
			if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
				return openapitools.ParseURL(ctx, src, o)
			}
			return openapitools.ParseFile(ctx, src, o)
		}
		o := &openapitools.Options{Prefix: prefix, BaseURL: opts.openAPIBase}
		api, err := read(o)
		if err != nil {
			return nil, nil, fmt.Errorf("-openapi %q: %w", spec, err)
		}
		// The credentials of the schemes this description declares.
		if declared := api.SecuritySchemes(); slices.ContainsFunc(declared, func(s string) bool { _, ok := secrets[s]; return ok }) {
			o.Secrets = map[string]string{}
			for _, s := range declared {
				if v, ok := secrets[s]; ok {
					o.Secrets[s] = v
				}
			}
			if api, err = read(o); err != nil {
				return nil, nil, fmt.Errorf("-openapi %q: %w", spec, err)
			}
		}
		var names []string
		for _, t := range api.Tools() {
			if from, ok := sources[t.Name]; ok {
				return nil, nil, fmt.Errorf("-openapi %q: its tool %s has the name of another tool (%s): give it a prefix, as in -openapi \"name=FILE\"", spec, t.Name, from)
			}
			list = append(list, t)
			sources[t.Name] = openAPISource + spec
			names = append(names, t.Name)
		}
		fmt.Fprintf(out, "OpenAPI %q: %d tools (%s); calls that change something ask first.\n", spec, len(names), strings.Join(names, ", "))
		for _, op := range api.Skipped() {
			fmt.Fprintf(out, "OpenAPI %q: %s %s left out: %v\n", spec, op.Method, op.Path, op.Err)
		}
		apis = append(apis, api)
	}
	tools, err := toolset.New(list...)
	return tools, apis, err
}

// needsApproval is the approval policy of the descriptions' tools: a call
// that changes something asks first.
func needsApproval(apis []*openapitools.API) func(*genai.FunctionCall) bool {
	return func(call *genai.FunctionCall) bool {
		for _, api := range apis {
			if api.NeedsApproval(call) {
				return true
			}
		}
		return false
	}
}
