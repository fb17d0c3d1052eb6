package fake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/genai"
)

// wireRequest is the JSON body of generateContent and streamGenerateContent
// as the two backends define it: GenerateContentRequest of
// google.ai.generativelanguage.v1beta and of google.cloud.aiplatform.v1beta1,
// merged; [fieldOn] says which fields one backend lacks. genai has no Go
// type for it: the SDK builds it from GenerateContentConfig.
type wireRequest struct {
	// Model is the request message's model field, which the path also
	// carries. genai never sends it; the legacy Go SDK
	// (cloud.google.com/go/ai) marshals the whole request message, model
	// included, and the API answers 200. The path decides which model
	// answers.
	Model             string                        `json:"model,omitempty"`
	Contents          []*genai.Content              `json:"contents,omitempty"`
	SystemInstruction *genai.Content                `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool                 `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig             `json:"toolConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting        `json:"safetySettings,omitempty"`
	GenerationConfig  *generationConfig             `json:"generationConfig,omitempty"`
	CachedContent     string                        `json:"cachedContent,omitempty"`
	Labels            map[string]string             `json:"labels,omitempty"`
	ServiceTier       genai.ServiceTier             `json:"serviceTier,omitempty"`
	Store             *bool                         `json:"store,omitempty"`
	ContinuationToken []byte                        `json:"continuationToken,omitempty"`
	ModelArmorConfig  *genai.ModelArmorConfig       `json:"modelArmorConfig,omitempty"`
	OutputConfig      *genai.GenerationOutputConfig `json:"outputConfig,omitempty"`
}

// generationConfig is the wire generationConfig: genai.GenerationConfig plus
// imageConfig, which the SDK moves there from GenerateContentConfig, and
// modelConfig, the name Vertex AI gives modelSelectionConfig
// (models.go:1452).
type generationConfig struct {
	genai.GenerationConfig
	ImageConfig *genai.ImageConfig          `json:"imageConfig,omitempty"`
	ModelConfig *genai.ModelSelectionConfig `json:"modelConfig,omitempty"`
}

// fieldViolation is one entry of a google.rpc.BadRequest detail.
type fieldViolation struct {
	field, description string
}

// schemaWalker checks a parsed body against the Go types that describe it,
// the way the API's proto JSON parser does (the proto3 JSON mapping,
// https://protobuf.dev/programming-guides/json/): every object key must name
// a field of the backend (lowerCamelCase or snake_case), every value must
// have a JSON form its field takes, enum values must be known. It also
// rewrites the tree into the canonical form encoding/json decodes: keys in
// lowerCamelCase, bytes in padded standard base64, enums by name, integers
// as plain JSON numbers.
type schemaWalker struct {
	backend    genai.Backend
	version    string // the API version of the path, for [fieldOn]
	violations []fieldViolation
}

// at is where a value sits: its path in the API's notation
// ("tools[0].function_declarations[1]"), and, for a field value, the field's
// key as sent and the path of the object holding it.
type at struct {
	path, key, parent string
}

func (a at) child(key, name string) at {
	return at{path: joinPath(a.path, snakeCase(name)), key: key, parent: a.path}
}

func (a at) index(i int) at {
	return at{path: fmt.Sprintf("%s[%d]", a.path, i)}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (w *schemaWalker) add(field, description string) {
	w.violations = append(w.violations, fieldViolation{field, "Invalid JSON payload received. " + description})
}

// unknownName reports key at an object, in the API's words.
func (w *schemaWalker) unknownName(key, parent, reason string) {
	if parent == "" {
		w.add("", fmt.Sprintf("Unknown name %q: %s", key, reason))
		return
	}
	w.add(parent, fmt.Sprintf("Unknown name %q at '%s': %s", key, parent, reason))
}

// invalidValue reports a value of the wrong kind or an unknown enum value.
func (w *schemaWalker) invalidValue(a at, typeName string, v *jsonValue) {
	w.violations = append(w.violations, fieldViolation{a.path,
		fmt.Sprintf("Invalid value at '%s' (%s), %s", a.path, typeName, v)})
}

// mismatch reports v, which does not fit a field of type t.
func (w *schemaWalker) mismatch(a at, t reflect.Type, v *jsonValue) {
	switch {
	case v.kind == jsonArray && a.key != "":
		w.unknownName(a.key, a.parent, "Proto field is not repeating, cannot start list.")
	case v.kind == jsonObject && a.key != "":
		w.unknownName(a.key, a.parent, "Starting an object on a scalar field")
	default:
		w.invalidValue(a, protoTypeName(t), v)
	}
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	timeType     = reflect.TypeOf(time.Time{})
)

// walk checks v against type t and normalizes it in place.
func (w *schemaWalker) walk(t reflect.Type, v *jsonValue, a at) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v.kind == jsonNull { // proto JSON: null leaves the field unset
		return
	}
	switch {
	case t == durationType || t == timeType:
		if v.kind != jsonString {
			w.mismatch(a, t, v)
		}
	case t.Kind() == reflect.Interface: // google.protobuf.Value: any JSON
	case t.Kind() == reflect.Struct:
		w.walkObject(t, v, a)
	case t.Kind() == reflect.Map:
		if v.kind != jsonObject {
			w.mismatch(a, t, v)
			return
		}
		for i, e := range v.vals {
			ea := at{path: fmt.Sprintf("%s[%d].value", a.path, i)}
			if e.kind == jsonNull && t.Elem().Kind() != reflect.Interface { // proto maps hold no nulls
				w.invalidValue(ea, protoTypeName(t.Elem()), e)
				continue
			}
			w.walk(t.Elem(), e, ea)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		w.walkBytes(t, v, a)
	case t.Kind() == reflect.Slice:
		if v.kind == jsonObject && isMessage(t.Elem()) {
			// A lone object for a repeated message field is read as its
			// one element, and named in paths without an index
			// ('tools.function_declarations[0]'); the rule "json-fields"
			// says what backs it.
			one := *v
			*v = jsonValue{kind: jsonArray, vals: []*jsonValue{&one}}
			w.walk(t.Elem(), &one, at{path: a.path})
			return
		}
		if v.kind != jsonArray {
			w.invalidValue(a, protoTypeName(t), v)
			return
		}
		for i, e := range v.vals {
			if t.Elem().Kind() != reflect.Interface && (e.kind == jsonArray || e.kind == jsonNull) { // proto lists hold no lists or nulls
				w.invalidValue(a.index(i), protoTypeName(t.Elem()), e)
				continue
			}
			w.walk(t.Elem(), e, a.index(i))
		}
	default:
		w.walkScalar(t, v, a)
	}
}

// isMessage reports whether t, a list's element type, is a message: a
// struct, or a pointer to one, other than the well-known time types.
func isMessage(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != timeType
}

func (w *schemaWalker) walkObject(t reflect.Type, v *jsonValue, a at) {
	if v.kind != jsonObject {
		if v.kind == jsonArray && a.key != "" {
			w.unknownName(a.key, a.parent, "Proto field is not repeating, cannot start list.")
			return
		}
		w.invalidValue(a, protoTypeName(t), v)
		return
	}
	fields := fieldsOf(t)
	for i, key := range v.keys {
		f, ok := fields[key]
		if !ok || !fieldOn(w.backend, w.version, t, f.name) {
			w.unknownName(key, a.path, "Cannot find field.")
			continue
		}
		v.keys[i] = f.name
		w.walk(f.typ, v.vals[i], a.child(key, f.name))
	}
}

func (w *schemaWalker) walkBytes(t reflect.Type, v *jsonValue, a at) {
	if v.kind != jsonString {
		w.mismatch(a, t, v)
		return
	}
	// Proto JSON accepts standard and URL-safe base64, padded or not.
	s := strings.TrimRight(v.str, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			v.str = base64.StdEncoding.EncodeToString(b)
			return
		}
	}
	w.violations = append(w.violations, fieldViolation{a.path,
		fmt.Sprintf("Invalid value at '%s' (TYPE_BYTES), Base64 decoding failed for %q", a.path, v.str)})
}

func (w *schemaWalker) walkScalar(t reflect.Type, v *jsonValue, a at) {
	var ok bool
	switch t.Kind() {
	case reflect.String:
		switch {
		case v.kind == jsonString:
			ok = knownEnumName(t, v.str)
		case v.kind == jsonNumber && isEnum(t):
			// Proto JSON takes an enum by number too.
			n, err := strconv.ParseInt(v.str, 10, 32)
			var name string
			if err == nil {
				name, ok = enumByNumber(w.backend, t, n)
			}
			if ok {
				v.kind, v.str = jsonString, name
			}
		}
		if !ok && (v.kind == jsonString || v.kind == jsonNumber) {
			w.invalidValue(a, protoTypeName(t), v)
			return
		}
	case reflect.Bool:
		ok = v.kind == jsonBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// Proto JSON takes integers as numbers or strings, in exponent
		// notation too (1e2); the value must be integral and in range.
		var lit string
		if lit, ok = integerLiteral(t, v); ok {
			v.kind, v.str = jsonNumber, lit
		}
	case reflect.Float32, reflect.Float64:
		// Proto JSON takes floats as numbers or as strings holding one.
		if (v.kind == jsonNumber || v.kind == jsonString) && jsonNumberLiteral.MatchString(v.str) {
			_, err := strconv.ParseFloat(v.str, t.Bits())
			if ok = err == nil; ok {
				v.kind = jsonNumber
			}
		}
	}
	if !ok {
		w.mismatch(a, t, v)
	}
}

// jsonNumberLiteral matches the JSON grammar of a number.
var jsonNumberLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// integerLiteral returns v, a JSON number or string, as the decimal
// literal of an integer of type t, and whether it is one.
func integerLiteral(t reflect.Type, v *jsonValue) (string, bool) {
	if v.kind != jsonNumber && v.kind != jsonString || !jsonNumberLiteral.MatchString(v.str) {
		return "", false
	}
	signed := t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64
	if signed {
		if _, err := strconv.ParseInt(v.str, 10, t.Bits()); err == nil {
			return v.str, true
		}
	} else if _, err := strconv.ParseUint(v.str, 10, t.Bits()); err == nil {
		return v.str, true
	}
	// An integral value written as 1.0 or 1e2 (exact up to 2^53).
	f, err := strconv.ParseFloat(v.str, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return "", false
	}
	lit := strconv.FormatInt(int64(f), 10)
	if signed {
		_, err = strconv.ParseInt(lit, 10, t.Bits())
	} else {
		_, err = strconv.ParseUint(lit, 10, t.Bits())
	}
	return lit, err == nil
}

// protoTypeName names t as the API's messages do.
func protoTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return "type.googleapis.com/google.protobuf.Duration"
	case t == timeType:
		return "type.googleapis.com/google.protobuf.Timestamp"
	case t.Kind() == reflect.Map:
		return "type.googleapis.com/google.protobuf.Struct"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.String && t.PkgPath() != "":
		return "type.googleapis.com/google.ai.generativelanguage.v1beta." + t.Name()
	}
	switch t.Kind() {
	case reflect.String:
		return "TYPE_STRING"
	case reflect.Bool:
		return "TYPE_BOOL"
	case reflect.Int32, reflect.Int:
		return "TYPE_INT32"
	case reflect.Int64:
		return "TYPE_INT64"
	case reflect.Float32:
		return "TYPE_FLOAT"
	case reflect.Float64:
		return "TYPE_DOUBLE"
	case reflect.Slice:
		return "TYPE_BYTES"
	}
	return "TYPE_" + strings.ToUpper(t.Kind().String())
}

// fieldInfo is one JSON field of a struct type.
type fieldInfo struct {
	name string // the lowerCamelCase JSON name
	typ  reflect.Type
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

// fieldsOf returns the JSON fields of struct type t, keyed by both their
// lowerCamelCase and snake_case names. Embedded structs without a tag are
// flattened, as encoding/json does.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	m := map[string]fieldInfo{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			for k, v := range fieldsOf(f.Type) {
				m[k] = v
			}
			continue
		}
		if !f.IsExported() || tag == "-" || tag == "" {
			continue
		}
		info := fieldInfo{name: tag, typ: f.Type}
		m[tag] = info
		m[snakeCase(tag)] = info
	}
	fieldCache.Store(t, m)
	return m
}

// snakeCase turns a lowerCamelCase JSON name into the proto field name:
// "functionDeclarations" -> "function_declarations".
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// decodeRequest checks tree against the request's fields on backend, in API
// version, and decodes it. It returns the canonical JSON of the body, or the
// violations found.
func decodeRequest(backend genai.Backend, version string, tree *jsonValue) (*wireRequest, []byte, []fieldViolation) {
	return decodeBody[wireRequest](backend, version, tree)
}

// decodeBody is decodeRequest for a body of type T.
func decodeBody[T any](backend genai.Backend, version string, tree *jsonValue) (*T, []byte, []fieldViolation) {
	w := schemaWalker{backend: backend, version: version}
	w.walk(reflect.TypeFor[T](), tree, at{})
	if len(w.violations) > 0 {
		return nil, nil, w.violations
	}
	var buf bytes.Buffer
	tree.encode(&buf)
	var req T
	if err := json.Unmarshal(buf.Bytes(), &req); err != nil {
		// The walk accepts only what decodes; reaching this is a bug here.
		return nil, nil, []fieldViolation{{"", "Invalid JSON payload received. " + err.Error()}}
	}
	return &req, buf.Bytes(), nil
}
