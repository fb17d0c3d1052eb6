package openapitools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/toolname"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An API is a description read and made into tools: one per operation
// that could be made one. It is immutable and safe for concurrent use.
type API struct {
	// Title and Version are the description's info.title and info.version.
	Title, Version string

	ops    []*Operation
	byName map[string]*Operation
	opts   Options
	client *client
	base   *url.URL // where the description was read from, for relative server URLs
	search *searchIndex
}

// An Operation is one operation of a description: how it is called, and
// the tool made of it, or why there is none.
type Operation struct {
	// Name is the tool's name: Options.Prefix, then the operationId, or
	// the method and path when there is none, made to follow Gemini's
	// rule and unique in the API.
	Name string
	// OperationID is the operationId as written; "" when there is none.
	OperationID string
	// Method is the HTTP method, in capitals; Path the path as written,
	// with its {templates}.
	Method, Path string
	// Summary and Description are the operation's, as written.
	Summary, Description string
	Tags                 []string
	Deprecated           bool
	// ReadOnly says the method is GET or HEAD, which change nothing: the
	// tool is marked ReadOnly (safe to repeat), and by default needs no
	// approval.
	ReadOnly bool
	// NeedsApproval is Options.NeedsApproval's word on the operation.
	NeedsApproval bool
	// Arguments says where each argument of the tool goes in the request.
	Arguments []Argument
	// MediaType is the media type of the request body the tool sends, ""
	// when it sends none. Of several, JSON is preferred, then
	// application/x-www-form-urlencoded, then multipart/form-data, then
	// the first other.
	MediaType string
	// Security lists the alternative security requirements, each the
	// names of the schemes it needs together; nil when none is needed.
	Security [][]string

	// Tool is the tool made of the operation; nil when Err is set.
	Tool *toolset.Tool
	// Err says why there is no tool: it wraps [ErrExcluded],
	// [ErrUnsupported] or toolset.ErrSchemaTooLarge.
	Err error

	api         *API
	acceptTypes string // the Accept header: the media types of its successful answers
	params      []*param
	body        *body
	servers     openapi3.Servers
	security    openapi3.SecurityRequirements
}

// An Argument is one property of a tool's arguments: a parameter, or the
// request body.
type Argument struct {
	// Name is the property's name, which follows Gemini's rule for
	// parameter names: the parameter's name with each character other
	// than a letter, a digit or '_' replaced by '_'. Two parameters that
	// would share a name (the same name in the query and in a header, say)
	// are told apart by their location in front: "query_id",
	// "header_id". The request body is "body".
	Name string
	// In is where it goes: "path", "query", "header", "cookie" or "body".
	In string
	// Param is the parameter's name in the description; "" for the body.
	Param    string
	Required bool
}

// param is how one parameter is sent.
type param struct {
	arg, name, in string
	style         string
	explode       bool
	allowReserved bool
	content       string // the media type of a parameter given as content, not schema
}

// body is how the request body is sent.
type body struct {
	arg       string
	mediaType string
	kind      bodyKind
	encoding  map[string]*openapi3.Encoding
	// binary names the properties of a multipart body sent as files.
	binary map[string]bool
}

type bodyKind int

const (
	bodyJSON bodyKind = iota
	bodyForm
	bodyMultipart
	bodyText
)

// Operations returns every operation of the description, tools and not,
// sorted by path and then method.
func (a *API) Operations() []*Operation { return slices.Clone(a.ops) }

// Tools returns the tools, one per operation that has one, in the order of
// [API.Operations].
func (a *API) Tools() []*toolset.Tool {
	var out []*toolset.Tool
	for _, op := range a.ops {
		if op.Tool != nil {
			out = append(out, op.Tool)
		}
	}
	return out
}

// Set returns the tools as a set.
func (a *API) Set() (*toolset.Set, error) { return toolset.New(a.Tools()...) }

// Skipped returns the operations that have no tool, each with its Err.
func (a *API) Skipped() []*Operation {
	var out []*Operation
	for _, op := range a.ops {
		if op.Tool == nil {
			out = append(out, op)
		}
	}
	return out
}

// SecuritySchemes returns the names of the security schemes the
// description declares, the keys of Options.Credentials and
// Options.Secrets, sorted.
func (a *API) SecuritySchemes() []string { return sortedKeys(a.client.schemes) }

// Lookup returns the operation of a tool, by the tool's name.
func (a *API) Lookup(name string) (*Operation, bool) {
	op, ok := a.byName[name]
	return op, ok
}

// NeedsApproval is the API's approval policy for agent.Config's
// NeedsApproval: true for a call of an operation whose NeedsApproval is
// set (by default, any but GET and HEAD), and for a call through the
// search mode's call tool ([API.SearchTools]) of such an operation, or of
// one it does not know. It is false for every other call, including calls
// of tools that are not the API's: combine it with the program's own
// policy for those.
func (a *API) NeedsApproval(call *genai.FunctionCall) bool {
	if call == nil {
		return false
	}
	if op, ok := a.byName[call.Name]; ok {
		return op.NeedsApproval
	}
	if a.search != nil && call.Name == a.search.callName {
		name, _ := call.Args[argOperation].(string)
		op, ok := a.byName[name]
		return !ok || op.NeedsApproval
	}
	return false
}

// methods lists the methods of a path item in the order operations are
// sorted by.
var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE", "QUERY"}

func methodRank(m string) int {
	if i := slices.Index(methods, m); i >= 0 {
		return i
	}
	return len(methods)
}

func parse(ctx context.Context, data []byte, location *url.URL, opts *Options) (*API, error) {
	if opts == nil {
		opts = &Options{}
	}
	doc, v2, err := load(ctx, data, location, opts)
	if err != nil {
		return nil, err
	}
	if v2 != nil {
		patchV2(v2, doc)
	}
	a := &API{opts: *opts, byName: map[string]*Operation{}}
	if doc.Info != nil {
		a.Title, a.Version = doc.Info.Title, doc.Info.Version
	}
	if location != nil && location.Scheme != "file" {
		a.base = location
	}
	if a.client, err = newClient(doc, opts); err != nil {
		return nil, err
	}
	if err := a.checkServerVariables(doc); err != nil {
		return nil, err
	}
	conv := newConverter(doc)
	used := map[string]bool{}
	if doc.Paths != nil {
		for _, p := range doc.Paths.Keys() {
			item := doc.Paths.Value(p)
			if item == nil {
				continue
			}
			ops := item.Operations()
			ms := make([]string, 0, len(ops))
			for m, op := range ops {
				if op != nil {
					ms = append(ms, m)
				}
			}
			slices.SortFunc(ms, func(x, y string) int {
				if d := methodRank(x) - methodRank(y); d != 0 {
					return d
				}
				return strings.Compare(x, y)
			})
			for _, m := range ms {
				op := a.newOperation(doc, conv, p, m, item, ops[m], used)
				a.ops = append(a.ops, op)
				a.byName[op.Name] = op
				if op.Err != nil && opts.Logger != nil {
					opts.Logger.LogAttrs(ctx, slog.LevelDebug, "openapitools: operation left out",
						slog.String("operation", op.Method+" "+op.Path), slog.String("reason", op.Err.Error()))
				}
			}
		}
	}
	a.search = newSearchIndex(a)
	return a, nil
}

// newOperation reads one operation and makes its tool.
func (a *API) newOperation(doc *openapi3.T, conv *converter, p, method string, item *openapi3.PathItem, o *openapi3.Operation, used map[string]bool) *Operation {
	op := &Operation{
		OperationID: o.OperationID,
		Method:      strings.ToUpper(method),
		Path:        p,
		Summary:     o.Summary,
		Description: o.Description,
		Tags:        o.Tags,
		Deprecated:  o.Deprecated,
		api:         a,
	}
	op.ReadOnly = op.Method == "GET" || op.Method == "HEAD"
	op.Name = uniqueToolName(a.opts.Prefix, op, used)
	switch {
	case o.Servers != nil && len(*o.Servers) > 0:
		op.servers = *o.Servers
	case len(item.Servers) > 0:
		op.servers = item.Servers
	default:
		op.servers = doc.Servers
	}
	op.acceptTypes = acceptTypes(o)
	op.security = doc.Security
	if o.Security != nil {
		op.security = *o.Security
	}
	for _, req := range op.security {
		if len(req) == 0 {
			op.Security = append(op.Security, []string{})
			continue
		}
		op.Security = append(op.Security, sortedKeys(req))
	}
	if a.opts.NeedsApproval != nil {
		op.NeedsApproval = a.opts.NeedsApproval(op)
	} else {
		op.NeedsApproval = !op.ReadOnly
	}
	if err := a.excluded(op); err != nil {
		op.Err = err
		return op
	}
	schema, err := op.arguments(conv, item, o)
	if err != nil {
		op.Err = err
		return op
	}
	tool := &toolset.Tool{
		Name:        op.Name,
		Description: toolDescription(op, a.opts.MaxDescriptionLen),
		InputSchema: schema,
		Run:         op.run,
		ReadOnly:    op.ReadOnly,
	}
	if err := tool.Check(); err != nil {
		// A default that its own schema refuses (common in real
		// descriptions) does not cost the tool: the schema is taken
		// without defaults.
		if !errors.Is(err, toolset.ErrSchemaTooLarge) && stripDefaults(schema) {
			tool.InputSchema = schema
			err = tool.Check()
		}
		if err != nil {
			if !errors.Is(err, toolset.ErrSchemaTooLarge) {
				err = fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
			op.Err = err
			return op
		}
	}
	op.Tool = tool
	return op
}

// excluded applies the Options' filters.
func (a *API) excluded(op *Operation) error {
	o := &a.opts
	if len(o.Tags) > 0 && !slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(o.Tags, t) }) {
		return fmt.Errorf("%w: none of its tags %v is in Options.Tags", ErrExcluded, op.Tags)
	}
	if len(o.Methods) > 0 && !slices.ContainsFunc(o.Methods, func(m string) bool { return strings.EqualFold(m, op.Method) }) {
		return fmt.Errorf("%w: its method is not in Options.Methods", ErrExcluded)
	}
	if len(o.Paths) > 0 && !slices.ContainsFunc(o.Paths, func(pat string) bool {
		ok, _ := path.Match(pat, op.Path)
		return ok || pat == op.Path
	}) {
		return fmt.Errorf("%w: its path matches none of Options.Paths", ErrExcluded)
	}
	if o.Include != nil && !o.Include(op) {
		return fmt.Errorf("%w: Options.Include left it out", ErrExcluded)
	}
	return nil
}

// uniqueToolName names an operation's tool: the operationId, or the
// method and the path's segments, made to follow Gemini's rule, and made
// unique with a number.
func uniqueToolName(prefix string, op *Operation, used map[string]bool) string {
	base := op.OperationID
	if strings.TrimSpace(base) == "" {
		var parts []string
		parts = append(parts, strings.ToLower(op.Method))
		for _, seg := range strings.Split(op.Path, "/") {
			seg = strings.Trim(seg, "{}")
			if seg != "" {
				parts = append(parts, seg)
			}
		}
		base = strings.Join(parts, "_")
	}
	name := toolname.Gemini(prefix, base)
	for i := 2; used[name]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = toolname.Shorten(toolname.Gemini(prefix, base), prefix+base, toolset.MaxNameLen-len(suffix)) + suffix
	}
	used[name] = true
	return name
}

// toolDescription is the summary, then the description, trimmed and cut
// at a word to at most max bytes.
func toolDescription(op *Operation, max int) string {
	if max == 0 {
		max = DefaultMaxDescriptionLen
	}
	summary, desc := strings.TrimSpace(op.Summary), strings.TrimSpace(op.Description)
	text := summary
	if desc != "" && desc != summary {
		text = joinText(summary, desc)
	}
	if op.Deprecated {
		text = joinText("Deprecated.", text)
	}
	if text == "" {
		text = op.Method + " " + op.Path
	}
	return cut(text, max)
}

// cut shortens s to at most max bytes, at a space where there is one near
// the end, with "…" at the end; max < 0 means no bound.
func cut(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	const ellipsis = "…"
	end := max - len(ellipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	if i := strings.LastIndexAny(s[:end], " \n\t"); i > end*3/4 {
		end = i
	}
	return strings.TrimRight(s[:end], " \n\t") + ellipsis
}

// stripDefaults removes every default from s and its subschemas, and
// reports whether there was one.
func stripDefaults(s *jsonschema.Schema) bool {
	found := false
	var walk func(s *jsonschema.Schema)
	seen := map[*jsonschema.Schema]bool{}
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Default != nil {
			s.Default, found = nil, true
		}
		for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.Not, s.If, s.Then, s.Else, s.Contains, s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties, s.ContentSchema} {
			walk(c)
		}
		for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, c := range list {
				walk(c)
			}
		}
		for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.Defs, s.PatternProperties, s.DependentSchemas} {
			for _, c := range m {
				walk(c)
			}
		}
	}
	// Definitions are shared between tools: copy those that change.
	if s.Defs != nil {
		defs := make(map[string]*jsonschema.Schema, len(s.Defs))
		for k, d := range s.Defs {
			defs[k] = d.CloneSchemas()
		}
		s.Defs = defs
	}
	walk(s)
	return found
}

// patchV2 puts back what kin-openapi's conversion of a Swagger 2.0
// description loses. How array parameters are joined: Swagger 2.0's
// default is csv (a=1,2), which OpenAPI 3 says with explode false;
// kin-openapi keeps only the query parameters' explicit formats, and
// neither the default, nor formData's, nor tsv (which OpenAPI 3 cannot
// say: it becomes this package's own "tabDelimited" style). And that a
// form whose fields are required must be sent.
func patchV2(d2 *openapi2.T, doc *openapi3.T) {
	if doc.Paths == nil {
		return
	}
	for p, item2 := range d2.Paths {
		item3 := doc.Paths.Value(p)
		if item2 == nil || item3 == nil {
			continue
		}
		for m, op2 := range item2.Operations() {
			op3 := item3.GetOperation(strings.ToUpper(m))
			if op2 == nil || op3 == nil {
				continue
			}
			params := append(slices.Clone(item2.Parameters), op2.Parameters...)
			for _, pr := range params {
				if pr != nil && pr.Ref != "" {
					name, _ := strings.CutPrefix(pr.Ref, "#/parameters/")
					pr = d2.Parameters[unescapePointer(name)]
				}
				if pr != nil && pr.In == "formData" && pr.Required && op3.RequestBody != nil && op3.RequestBody.Value != nil {
					op3.RequestBody.Value.Required = true
				}
				if pr == nil || !pr.Type.Is("array") {
					continue
				}
				style, explode := v2Style(pr.In, pr.CollectionFormat)
				if pr.In == "formData" {
					if op3.RequestBody == nil || op3.RequestBody.Value == nil {
						continue
					}
					for _, mt := range op3.RequestBody.Value.Content {
						if mt.Encoding == nil {
							mt.Encoding = map[string]*openapi3.Encoding{}
						}
						if mt.Encoding[pr.Name] == nil {
							mt.Encoding[pr.Name] = &openapi3.Encoding{Style: style, Explode: &explode}
						}
					}
					continue
				}
				for _, list := range []openapi3.Parameters{op3.Parameters, item3.Parameters} {
					for _, r := range list {
						if r != nil && r.Value != nil && r.Value.Name == pr.Name && r.Value.In == pr.In {
							r.Value.Style, r.Value.Explode = style, &explode
						}
					}
				}
			}
		}
	}
}

// v2Style maps a Swagger 2.0 collectionFormat to a style and explode.
func v2Style(in, format string) (string, bool) {
	simple := in == "path" || in == "header"
	switch format {
	case "multi":
		return "form", true
	case "ssv":
		return "spaceDelimited", false
	case "pipes":
		return "pipeDelimited", false
	case "tsv":
		return styleTab, false
	}
	if simple {
		return "simple", false
	}
	return "form", false
}

// styleTab is the style of Swagger 2.0's tsv, which OpenAPI 3 lacks.
const styleTab = "tabDelimited"

// acceptTypes lists the media types of an operation's successful (2xx
// and default) answers, for the Accept header; "" when it says none.
func acceptTypes(o *openapi3.Operation) string {
	if o.Responses == nil {
		return ""
	}
	var types []string
	for code, r := range o.Responses.Map() {
		if r == nil || r.Value == nil || !(strings.HasPrefix(code, "2") || code == "default") {
			continue
		}
		for mt := range r.Value.Content {
			if !slices.Contains(types, mt) {
				types = append(types, mt)
			}
		}
	}
	slices.Sort(types)
	return strings.Join(types, ", ")
}
