package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// A FormatError says what in a file cannot be used, and where: the file,
// the field as a JSON path (eval_cases[2].conversation[0].user_content),
// and what is wrong with it.
type FormatError struct {
	File  string // the file, or "" for data not read from a file
	Field string // the field's JSON path; "" for the whole file
	Msg   string
}

// Error returns "eval: FILE: FIELD: MSG".
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("eval: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadFile reads an eval set, or a criteria file, in any of the formats
// ADK reads:
//
//   - an eval set (*.evalset.json, and *.test.json written in the same
//     schema): {eval_set_id, eval_cases: [...]}, keys in snake_case or
//     camelCase;
//   - the older *.test.json format: a list of turns,
//     [{query, expected_tool_use: [{tool_name, tool_input}],
//     expected_intermediate_agent_responses, reference}], which is one case
//     (ADK's AgentEvaluator reads it so) whose ID is the file's name;
//   - the named-list format: [{name, data: [turns], initial_session}], one
//     case per entry;
//   - a criteria file (test_config.json): {criteria: {metric: threshold or
//     {threshold, ...}}, custom_metrics, ...}, which gives a Set with no
//     cases and its Criteria.
//
// The format is told by the content, not the name. For an eval set, the
// file test_config.json in the same directory, when there is one, gives
// Set.Criteria, as ADK's AgentEvaluator reads it.
//
// LoadFile accepts what ADK accepts: unknown keys are kept (in the Extra
// fields) and written back, every optional genai field may be null, bytes
// are base64 in either alphabet. What it cannot use is an error, a
// [*FormatError] naming the field: a missing required field, a value of
// the wrong type, a case with both or neither of conversation and
// conversation_scenario, a part with a field genai does not have.
func LoadFile(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	set, err := parse(data, path)
	if err != nil {
		return nil, err
	}
	if set.Cases != nil && set.Criteria == nil {
		cfg := filepath.Join(filepath.Dir(path), "test_config.json")
		if cfg != filepath.Clean(path) {
			if data, err := os.ReadFile(cfg); err == nil {
				c, err := parseCriteriaFile(data, cfg)
				if err != nil {
					return nil, err
				}
				set.Criteria = c
			} else if !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("eval: %w", err)
			}
		}
	}
	return set, nil
}

// Parse reads an eval set or a criteria file from data, as [LoadFile]
// does, without looking for a test_config.json. name stands for the file's
// name: the older formats take their set's (and case's) ID from it, and
// errors quote it.
func Parse(data []byte, name string) (*Set, error) { return parse(data, name) }

func parse(data []byte, name string) (*Set, error) {
	d := &decoder{file: name}
	v, err := decodeOrdered(data)
	if err != nil {
		return nil, &FormatError{File: name, Msg: err.Error()}
	}
	switch v := v.(type) {
	case []any:
		return d.oldSet(v)
	case *object:
		f := d.fields("", v)
		switch {
		case f.has("eval_cases") || f.has("eval_set_id"):
			return d.set(f)
		case f.has("criteria") || strings.Contains(filepath.Base(name), "test_config"):
			c, err := d.criteria(f)
			if err != nil {
				return nil, err
			}
			return &Set{Criteria: c}, nil
		}
		return nil, d.errf("", "neither an eval set (no eval_set_id or eval_cases) nor a criteria file (no criteria)")
	}
	return nil, d.errf("", "want an eval set (an object) or a list of turns, got %s", kind(v))
}

// decoder reads one file, and names it in its errors.
type decoder struct{ file string }

func (d *decoder) errf(field, format string, args ...any) error {
	return &FormatError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fields reads an object's members by their snake_case names, whichever
// case the file used, and collects the members it did not read.
type fields struct {
	d    *decoder
	path string
	o    *object
	idx  map[string]int // snake_case name -> index
	used []bool
	err  error // two keys with one name
}

func (d *decoder) fields(path string, o *object) *fields {
	f := &fields{d: d, path: path, o: o, idx: map[string]int{}, used: make([]bool, len(o.keys))}
	for i, k := range o.keys {
		n := toSnake(k)
		if j, dup := f.idx[n]; dup && f.err == nil {
			f.err = d.errf(path, "both %q and %q are given: they are one field", o.keys[j], k)
		}
		f.idx[n] = i
	}
	return f
}

// at returns the path of a member.
func (f *fields) at(name string) string {
	if f.path == "" {
		return name
	}
	return f.path + "." + name
}

func (f *fields) has(name string) bool {
	_, ok := f.idx[name]
	return ok
}

// get returns a member's value, marking it read; null counts as absent.
func (f *fields) get(name string) (any, bool) {
	i, ok := f.idx[name]
	if !ok {
		return nil, false
	}
	f.used[i] = true
	if f.o.vals[i] == nil {
		return nil, false
	}
	return f.o.vals[i], true
}

func (f *fields) str(name string, required bool) (string, error) {
	v, ok := f.get(name)
	if !ok {
		if required {
			return "", f.d.errf(f.at(name), "required")
		}
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", f.d.errf(f.at(name), "want a string, got %s", kind(v))
	}
	return s, nil
}

func (f *fields) float(name string) (float64, error) {
	v, ok := f.get(name)
	if !ok {
		return 0, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, f.d.errf(f.at(name), "want a number, got %s", kind(v))
	}
	x, err := n.Float64()
	if err != nil {
		return 0, f.d.errf(f.at(name), "%v", err)
	}
	return x, nil
}

func (f *fields) list(name string) ([]any, bool, error) {
	v, ok := f.get(name)
	if !ok {
		return nil, false, nil
	}
	l, isList := v.([]any)
	if !isList {
		return nil, true, f.d.errf(f.at(name), "want a list, got %s", kind(v))
	}
	return l, true, nil
}

func (f *fields) object(name string) (*fields, error) {
	v, ok := f.get(name)
	if !ok {
		return nil, nil
	}
	o, isObj := v.(*object)
	if !isObj {
		return nil, f.d.errf(f.at(name), "want an object, got %s", kind(v))
	}
	sub := f.d.fields(f.at(name), o)
	return sub, sub.err
}

// raw returns a member as JSON, or nil when absent or null.
func (f *fields) raw(name string) (json.RawMessage, error) {
	v, ok := f.get(name)
	if !ok {
		return nil, nil
	}
	b, err := marshalValue(v)
	return b, err
}

// state returns a member that is a free-form object, or nil when it is
// absent, null or empty.
func (f *fields) state(name string) (map[string]any, error) {
	v, ok := f.get(name)
	if !ok {
		return nil, nil
	}
	if _, isObj := v.(*object); !isObj {
		return nil, f.d.errf(f.at(name), "want an object, got %s", kind(v))
	}
	b, err := marshalValue(v)
	if err != nil {
		return nil, f.d.errf(f.at(name), "%v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, f.d.errf(f.at(name), "%v", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// extra returns the members not read, as written, or nil.
func (f *fields) extra() map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for i, k := range f.o.keys {
		if f.used[i] {
			continue
		}
		b, err := marshalValue(f.o.vals[i])
		if err != nil {
			continue // values decoded from JSON always encode
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = b
	}
	return out
}

// kind names a decoded value's JSON type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case *object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func (d *decoder) set(f *fields) (*Set, error) {
	if f.err != nil {
		return nil, f.err
	}
	s := &Set{}
	var err error
	if s.ID, err = f.str("eval_set_id", true); err != nil {
		return nil, err
	}
	if s.Name, err = f.str("name", false); err != nil {
		return nil, err
	}
	if s.Description, err = f.str("description", false); err != nil {
		return nil, err
	}
	if s.Created, err = f.float("creation_timestamp"); err != nil {
		return nil, err
	}
	cases, ok, err := f.list("eval_cases")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, d.errf(f.at("eval_cases"), "required")
	}
	s.Cases = make([]Case, 0, len(cases))
	seen := map[string]string{}
	for i, v := range cases {
		path := index(f.at("eval_cases"), i)
		c, err := d.evalCase(path, v)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[c.ID]; dup {
			return nil, d.errf(path+".eval_id", "%q is also the id of %s: case ids must be unique", c.ID, first)
		}
		seen[c.ID] = path
		s.Cases = append(s.Cases, *c)
	}
	s.Extra = f.extra()
	return s, nil
}

func (d *decoder) evalCase(path string, v any) (*Case, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf(path, "want an eval case (an object), got %s", kind(v))
	}
	f := d.fields(path, o)
	if f.err != nil {
		return nil, f.err
	}
	c := &Case{}
	var err error
	if c.ID, err = f.str("eval_id", true); err != nil {
		return nil, err
	}
	turns, hasTurns, err := f.list("conversation")
	if err != nil {
		return nil, err
	}
	for i, t := range turns {
		turn, err := d.turn(index(f.at("conversation"), i), t)
		if err != nil {
			return nil, err
		}
		c.Turns = append(c.Turns, *turn)
	}
	sc, err := f.object("conversation_scenario")
	if err != nil {
		return nil, err
	}
	if sc != nil {
		if c.Scenario, err = d.scenario(sc); err != nil {
			return nil, err
		}
	}
	switch {
	case hasTurns && c.Scenario != nil:
		return nil, d.errf(path, "has both conversation and conversation_scenario: give one")
	case !hasTurns && c.Scenario == nil:
		return nil, d.errf(path, "has neither conversation nor conversation_scenario: give one")
	case hasTurns && len(c.Turns) == 0:
		return nil, d.errf(f.at("conversation"), "empty: a conversation has at least one turn")
	}
	si, err := f.object("session_input")
	if err != nil {
		return nil, err
	}
	if si != nil {
		if c.Session, err = d.session(si); err != nil {
			return nil, err
		}
	}
	if c.Rubrics, err = d.rubrics(f, "rubrics"); err != nil {
		return nil, err
	}
	if c.FinalState, err = f.state("final_session_state"); err != nil {
		return nil, err
	}
	if c.Created, err = f.float("creation_timestamp"); err != nil {
		return nil, err
	}
	c.Extra = f.extra()
	return c, nil
}

func (d *decoder) session(f *fields) (*SessionInput, error) {
	s := &SessionInput{}
	var err error
	if s.AppName, err = f.str("app_name", false); err != nil {
		return nil, err
	}
	if s.UserID, err = f.str("user_id", false); err != nil {
		return nil, err
	}
	if s.State, err = f.state("state"); err != nil {
		return nil, err
	}
	s.Extra = f.extra()
	return s, nil
}

func (d *decoder) scenario(f *fields) (*Scenario, error) {
	s := &Scenario{}
	var err error
	if s.StartingPrompt, err = f.str("starting_prompt", true); err != nil {
		return nil, err
	}
	if s.Plan, err = f.str("conversation_plan", true); err != nil {
		return nil, err
	}
	if s.Persona, err = f.raw("user_persona"); err != nil {
		return nil, err
	}
	s.Extra = f.extra()
	return s, nil
}

func (d *decoder) rubrics(f *fields, name string) ([]Rubric, error) {
	l, _, err := f.list(name)
	if err != nil {
		return nil, err
	}
	var out []Rubric
	for i, v := range l {
		path := index(f.at(name), i)
		o, ok := v.(*object)
		if !ok {
			return nil, d.errf(path, "want a rubric (an object), got %s", kind(v))
		}
		rf := d.fields(path, o)
		if rf.err != nil {
			return nil, rf.err
		}
		var r Rubric
		if r.ID, err = rf.str("rubric_id", true); err != nil {
			return nil, err
		}
		content, err := rf.object("rubric_content")
		if err != nil {
			return nil, err
		}
		if content == nil {
			return nil, d.errf(rf.at("rubric_content"), "required")
		}
		if r.Text, err = content.str("text_property", false); err != nil {
			return nil, err
		}
		if extra := content.extra(); extra != nil {
			for k := range extra {
				return nil, d.errf(content.at(k), "unknown field of rubric_content (it has text_property)")
			}
		}
		if r.Description, err = rf.str("description", false); err != nil {
			return nil, err
		}
		if r.Type, err = rf.str("type", false); err != nil {
			return nil, err
		}
		r.Extra = rf.extra()
		out = append(out, r)
	}
	return out, nil
}

func (d *decoder) turn(path string, v any) (*Turn, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf(path, "want a turn (an object), got %s", kind(v))
	}
	f := d.fields(path, o)
	if f.err != nil {
		return nil, f.err
	}
	t := &Turn{}
	var err error
	if t.ID, err = f.str("invocation_id", false); err != nil {
		return nil, err
	}
	uv, ok := f.get("user_content")
	if !ok {
		return nil, d.errf(f.at("user_content"), "required")
	}
	if t.User, err = d.content(f.at("user_content"), uv); err != nil {
		return nil, err
	}
	if rv, ok := f.get("final_response"); ok {
		if t.Response, err = d.content(f.at("final_response"), rv); err != nil {
			return nil, err
		}
	}
	data, err := f.object("intermediate_data")
	if err != nil {
		return nil, err
	}
	if data != nil {
		if err := d.intermediate(data, t); err != nil {
			return nil, err
		}
	}
	if t.Rubrics, err = d.rubrics(f, "rubrics"); err != nil {
		return nil, err
	}
	if t.AppDetails, err = f.raw("app_details"); err != nil {
		return nil, err
	}
	if t.Created, err = f.float("creation_timestamp"); err != nil {
		return nil, err
	}
	t.Extra = f.extra()
	return t, nil
}

// intermediate reads intermediate_data in either of its forms, told apart
// by their keys as ADK's pydantic union does.
func (d *decoder) intermediate(f *fields, t *Turn) error {
	if f.has("invocation_events") {
		for _, k := range []string{"tool_uses", "tool_responses", "intermediate_responses"} {
			if f.has(k) {
				return d.errf(f.at(k), "intermediate_data has invocation_events: it cannot also have %s", k)
			}
		}
		events, _, err := f.list("invocation_events")
		if err != nil {
			return err
		}
		t.Events = []Event{}
		for i, v := range events {
			path := index(f.at("invocation_events"), i)
			o, ok := v.(*object)
			if !ok {
				return d.errf(path, "want an event (an object), got %s", kind(v))
			}
			ef := d.fields(path, o)
			if ef.err != nil {
				return ef.err
			}
			var e Event
			if e.Author, err = ef.str("author", true); err != nil {
				return err
			}
			if cv, ok := ef.get("content"); ok {
				if e.Content, err = d.content(ef.at("content"), cv); err != nil {
					return err
				}
			}
			for k := range ef.extra() {
				return d.errf(ef.at(k), "unknown field of an invocation event (it has author and content)")
			}
			t.Events = append(t.Events, e)
		}
		t.DataExtra = f.extra()
		return nil
	}
	uses, _, err := f.list("tool_uses")
	if err != nil {
		return err
	}
	for i, v := range uses {
		var fc genai.FunctionCall
		if err := d.genaiValue(index(f.at("tool_uses"), i), v, &fc); err != nil {
			return err
		}
		t.ToolCalls = append(t.ToolCalls, &fc)
	}
	responses, _, err := f.list("tool_responses")
	if err != nil {
		return err
	}
	for i, v := range responses {
		var fr genai.FunctionResponse
		if err := d.genaiValue(index(f.at("tool_responses"), i), v, &fr); err != nil {
			return err
		}
		t.ToolResponses = append(t.ToolResponses, &fr)
	}
	inter, _, err := f.list("intermediate_responses")
	if err != nil {
		return err
	}
	for i, v := range inter {
		path := index(f.at("intermediate_responses"), i)
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return d.errf(path, "want [author, [parts]], got %s", kind(v))
		}
		author, ok := pair[0].(string)
		if !ok {
			return d.errf(index(path, 0), "want the author (a string), got %s", kind(pair[0]))
		}
		parts, ok := pair[1].([]any)
		if !ok {
			return d.errf(index(path, 1), "want a list of parts, got %s", kind(pair[1]))
		}
		r := AgentResponse{Author: author}
		for j, pv := range parts {
			var p genai.Part
			if err := d.genaiValue(index(index(path, 1), j), pv, &p); err != nil {
				return err
			}
			r.Parts = append(r.Parts, &p)
		}
		t.Intermediate = append(t.Intermediate, r)
	}
	t.DataExtra = f.extra()
	return nil
}

// content reads a genai.Content written by ADK (snake_case keys, nulls,
// URL-safe base64) or by anything else genai's types read.
func (d *decoder) content(path string, v any) (*genai.Content, error) {
	var c genai.Content
	if err := d.genaiValue(path, v, &c); err != nil {
		return nil, err
	}
	if len(c.Parts) == 0 {
		c.Parts = nil // "parts": [] is no parts, as a content written without them reads
	}
	return &c, nil
}

// genaiValue decodes v into out, a pointer to a genai type, after checking
// that the object, and each part in it, has only fields the Go type has:
// genai's decoder would drop the others silently.
func (d *decoder) genaiValue(path string, v any, out any) error {
	o, ok := v.(*object)
	if !ok {
		return d.errf(path, "want an object, got %s", kind(v))
	}
	clean := dropNulls(o).(*object)
	if err := d.checkFields(path, clean, reflect.TypeOf(out).Elem()); err != nil {
		return err
	}
	b, err := marshalValue(convertKeys(clean, toCamel, true))
	if err != nil {
		return d.errf(path, "%v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return d.errf(path, "%v", err)
	}
	return nil
}

// checkFields checks o's keys against the JSON fields of the struct type
// t, and recurses into the parts of a content.
func (d *decoder) checkFields(path string, o *object, t reflect.Type) error {
	known := jsonFields(t)
	for i, k := range o.keys {
		name := toCamel(k)
		if !known[strings.ToLower(name)] {
			return d.errf(path+"."+k, "not a field of genai.%s (google.golang.org/genai has no such field)", t.Name())
		}
		if t == reflect.TypeOf(genai.Content{}) && name == "parts" {
			parts, ok := o.vals[i].([]any)
			if !ok {
				return d.errf(path+"."+k, "want a list of parts, got %s", kind(o.vals[i]))
			}
			for j, p := range parts {
				po, ok := p.(*object)
				if !ok {
					return d.errf(index(path+"."+k, j), "want a part (an object), got %s", kind(p))
				}
				if err := d.checkFields(index(path+"."+k, j), po, reflect.TypeOf(genai.Part{})); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonFields returns the JSON field names of a struct type, lowercased:
// encoding/json matches them case-insensitively.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[strings.ToLower(name)] = true
	}
	return out
}
