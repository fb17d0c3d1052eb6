package openapitools

import (
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/toolname"
)

// maxArgNameLen is Gemini's limit on a parameter name.
const maxArgNameLen = 64

// bodyArg is the name of the argument that holds the request body.
const bodyArg = "body"

// arguments builds the tool's input schema, one object holding every
// parameter and the request body, and records where each goes.
func (op *Operation) arguments(conv *converter, item *openapi3.PathItem, o *openapi3.Operation) (*jsonschema.Schema, error) {
	cv := conv.root()
	var params []*openapi3.Parameter
	seen := map[[2]string]bool{}
	// The operation's parameters override the path's of the same name
	// and location.
	for _, list := range []openapi3.Parameters{o.Parameters, item.Parameters} {
		for _, r := range list {
			if r == nil {
				continue
			}
			if r.Value == nil {
				return nil, fmt.Errorf("%w: parameter $ref %q does not resolve (it points to nothing, or to $refs that lead back to it)", ErrUnsupported, r.Ref)
			}
			key := [2]string{r.Value.In, r.Value.Name}
			if r.Value.In == "header" {
				key[1] = strings.ToLower(key[1])
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			params = append(params, r.Value)
		}
	}
	// A {template} of the path that no parameter declares (a mistake
	// real descriptions make) is a required string.
	for _, m := range templateVar.FindAllStringSubmatch(op.Path, -1) {
		if !seen[[2]string{"path", m[1]}] {
			seen[[2]string{"path", m[1]}] = true
			params = append(params, &openapi3.Parameter{Name: m[1], In: "path", Required: true,
				Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"string"}}}})
		}
	}
	// Path parameters first, then query, header and cookie, each in the
	// order written.
	rank := map[string]int{"path": 0, "query": 1, "header": 2, "cookie": 3}
	slices.SortStableFunc(params, func(a, b *openapi3.Parameter) int { return rank[a.In] - rank[b.In] })
	supplied := op.api.client.suppliedParams(op.security)

	type prop struct {
		arg      *Argument
		schema   *jsonschema.Schema
		param    *param
		required bool
	}
	var props []prop
	for _, p := range params {
		in := p.In
		if _, ok := rank[in]; !ok {
			return nil, fmt.Errorf("%w: parameter %q is in %q, not in path, query, header or cookie", ErrUnsupported, p.Name, in)
		}
		if in == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(p.Name)) {
			continue // OpenAPI: such header parameters are ignored
		}
		if supplied[[2]string{in, strings.ToLower(p.Name)}] {
			continue // the program's credential, never the model's
		}
		pr := &param{name: p.Name, in: in, allowReserved: p.AllowReserved}
		var schema *jsonschema.Schema
		var err error
		switch {
		case p.Schema != nil:
			schema, err = cv.schemaRef(p.Schema, false)
		case len(p.Content) > 0:
			mt := firstKey(p.Content)
			pr.content = mt
			schema, err = cv.schemaRef(p.Content[mt].Schema, false)
		default:
			schema = &jsonschema.Schema{}
		}
		if err != nil {
			return nil, err
		}
		pr.style, pr.explode = p.Style, false
		if pr.style == "" {
			pr.style = map[string]string{"path": "simple", "query": "form", "header": "simple", "cookie": "form"}[in]
		}
		if p.Explode != nil {
			pr.explode = *p.Explode
		} else {
			pr.explode = pr.style == "form"
		}
		annotate(schema, p.Description, p.Deprecated, p.Example)
		props = append(props, prop{
			arg:      &Argument{Name: argName(p.Name), In: in, Param: p.Name, Required: p.Required || in == "path"},
			schema:   schema,
			param:    pr,
			required: p.Required || in == "path",
		})
	}

	var b *body
	if o.RequestBody != nil {
		if o.RequestBody.Value == nil {
			return nil, fmt.Errorf("%w: request body $ref %q does not resolve", ErrUnsupported, o.RequestBody.Ref)
		}
		rb := o.RequestBody.Value
		if mtName, mt := chooseMediaType(rb.Content); mt != nil {
			b = &body{mediaType: mtName, encoding: mt.Encoding}
			var schema *jsonschema.Schema
			var err error
			switch b.kind = kindOf(mtName); b.kind {
			case bodyText:
				schema = &jsonschema.Schema{Type: "string", Description: fmt.Sprintf("The request body, as %s.", mtName)}
				if mt.Schema != nil && mt.Schema.Value != nil && mt.Schema.Value.Type.Is("string") {
					schema, err = cv.schemaRef(mt.Schema, false)
				}
			default:
				if mt.Schema == nil {
					schema = &jsonschema.Schema{}
				} else {
					schema, err = cv.schemaRef(mt.Schema, false)
				}
				if b.kind == bodyMultipart {
					b.binary = binaryProperties(mt.Schema)
				}
			}
			if err != nil {
				return nil, err
			}
			annotate(schema, rb.Description, false, nil)
			props = append(props, prop{
				arg:      &Argument{Name: bodyArg, In: "body", Required: rb.Required},
				schema:   schema,
				required: rb.Required,
			})
			op.MediaType = mtName
		}
	}

	// Names: a parameter's name made a Gemini parameter name; names that
	// would be shared get their location in front; numbers keep the rest
	// apart.
	count := map[string]int{}
	for _, p := range props {
		count[p.arg.Name]++
	}
	for _, p := range props {
		if count[p.arg.Name] > 1 && p.arg.In != "body" {
			p.arg.Name = argName(p.arg.In + "_" + p.arg.Param)
		}
	}
	taken := map[string]bool{}
	for _, p := range props {
		base := p.arg.Name
		for i := 2; taken[p.arg.Name]; i++ {
			suffix := fmt.Sprintf("_%d", i)
			p.arg.Name = toolname.Shorten(base, base, maxArgNameLen-len(suffix)) + suffix
		}
		taken[p.arg.Name] = true
	}

	root := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	for _, p := range props {
		root.Properties[p.arg.Name] = p.schema
		root.PropertyOrder = append(root.PropertyOrder, p.arg.Name)
		if p.required {
			root.Required = append(root.Required, p.arg.Name)
		}
		op.Arguments = append(op.Arguments, *p.arg)
		if p.param != nil {
			p.param.arg = p.arg.Name
			op.params = append(op.params, p.param)
		} else {
			b.arg = p.arg.Name
		}
	}
	op.body = b
	defs, err := cv.defs()
	if err != nil {
		return nil, err
	}
	root.Defs = defs
	return root, nil
}

// annotate adds a parameter's or a body's description, deprecation and
// example to its schema.
func annotate(s *jsonschema.Schema, desc string, deprecated bool, example any) {
	if desc = strings.TrimSpace(desc); desc != "" && desc != s.Description {
		if s.Description == "" || s.Ref != "" {
			s.Description = desc
		} else {
			s.Description = joinText(desc, s.Description)
		}
	}
	if deprecated {
		s.Deprecated = true
	}
	if example != nil && s.Examples == nil && s.Ref == "" {
		s.Examples = []any{example}
	}
}

// argName makes a parameter's name one Gemini accepts as a parameter
// name: letters, digits and '_', starting with a letter or '_', at most
// 64 characters.
func argName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return toolname.Shorten(s, name, maxArgNameLen)
}

// chooseMediaType picks the request body's media type: JSON first, then
// form-urlencoded, then multipart, then the first other in name order.
func chooseMediaType(c openapi3.Content) (string, *openapi3.MediaType) {
	if len(c) == 0 {
		return "", nil
	}
	names := sortedKeys(c)
	for _, want := range []bodyKind{bodyJSON, bodyForm, bodyMultipart} {
		for _, n := range names {
			if kindOf(n) == want && (want != bodyJSON || isJSONType(n)) {
				return n, c[n]
			}
		}
	}
	// */* and the like: JSON, if nothing says otherwise.
	for _, n := range names {
		if kindOf(n) == bodyJSON {
			return n, c[n]
		}
	}
	return names[0], c[names[0]]
}

// kindOf says how a body of a media type is encoded.
func kindOf(mediaType string) bodyKind {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mediaType))
	}
	switch {
	case isJSONType(mt), mt == "*/*", mt == "application/*", mt == "":
		return bodyJSON
	case mt == "application/x-www-form-urlencoded":
		return bodyForm
	case strings.HasPrefix(mt, "multipart/"):
		return bodyMultipart
	}
	return bodyText
}

// isJSONType reports a JSON media type: application/json, text/json, or
// any +json.
func isJSONType(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// binaryProperties names the properties of a multipart body's schema that
// are files: string with format binary or base64, or arrays of them.
func binaryProperties(r *openapi3.SchemaRef) map[string]bool {
	if r == nil || r.Value == nil {
		return nil
	}
	out := map[string]bool{}
	isFile := func(r *openapi3.SchemaRef) bool {
		return r != nil && r.Value != nil && (r.Value.Format == "binary" || r.Value.Format == "base64" ||
			r.Value.ContentMediaType != "" && r.Value.ContentMediaType != "text/plain" && r.Value.ContentMediaType != "application/json")
	}
	for name, p := range r.Value.Properties {
		if isFile(p) || p != nil && p.Value != nil && p.Value.Type.Is("array") && isFile(p.Value.Items) {
			out[name] = true
		}
	}
	return out
}

func firstKey[V any](m map[string]V) string {
	keys := sortedKeys(m)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
