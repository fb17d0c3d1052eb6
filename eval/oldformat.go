package eval

import (
	"path/filepath"
	"strings"

	"google.golang.org/genai"
)

// This file reads ADK's two older formats, which ADK converts to an eval
// set on load (local_eval_sets_manager.py, agent_evaluator.py): a list of
// turns, which is one case, and a list of named cases. IDs that ADK makes
// up (uuid4 set ids, the file's path as the case id, time.time() stamps)
// are made deterministic here: the file's base name, and zero stamps.

// baseName returns the file's name without its directory and its
// .test.json, .evalset.json or .json suffix, as valid UTF-8.
func baseName(file string) string {
	b := strings.ToValidUTF8(filepath.Base(file), "\uFFFD")
	for _, suffix := range []string{".test.json", ".evalset.json", ".json"} {
		if s, ok := strings.CutSuffix(b, suffix); ok {
			return s
		}
	}
	return b
}

func (d *decoder) oldSet(list []any) (*Set, error) {
	if len(list) == 0 {
		return nil, d.errf("", "an empty list: an eval set in the older format lists at least one turn or case")
	}
	name := baseName(d.file)
	set := &Set{ID: name, Name: name}
	first, ok := list[0].(*object)
	if !ok {
		return nil, d.errf("[0]", "want an object, got %s", kind(list[0]))
	}
	if d.fields("[0]", first).has("data") {
		// [{name, data: [turns], initial_session}]: one case each.
		seen := map[string]string{}
		for i, v := range list {
			path := index("", i)
			c, err := d.namedCase(path, v)
			if err != nil {
				return nil, err
			}
			if prev, dup := seen[c.ID]; dup {
				return nil, d.errf(path+".name", "%q is also the name of %s: case names must be unique", c.ID, prev)
			}
			seen[c.ID] = path
			set.Cases = append(set.Cases, *c)
		}
		return set, nil
	}
	// [{query, expected_tool_use, ...}]: one case, one turn per entry.
	c := Case{ID: name}
	for i, v := range list {
		t, err := d.oldTurn(index("", i), v)
		if err != nil {
			return nil, err
		}
		c.Turns = append(c.Turns, *t)
	}
	set.Cases = []Case{c}
	return set, nil
}

func (d *decoder) namedCase(path string, v any) (*Case, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf(path, "want a case {name, data}, got %s", kind(v))
	}
	f := d.fields(path, o)
	if f.err != nil {
		return nil, f.err
	}
	c := &Case{}
	var err error
	if c.ID, err = f.str("name", true); err != nil {
		return nil, err
	}
	data, ok, err := f.list("data")
	if err != nil {
		return nil, err
	}
	if !ok || len(data) == 0 {
		return nil, d.errf(f.at("data"), "required: the case's turns")
	}
	for i, tv := range data {
		t, err := d.oldTurn(index(f.at("data"), i), tv)
		if err != nil {
			return nil, err
		}
		c.Turns = append(c.Turns, *t)
	}
	// ADK makes a session_input of a non-empty initial_session.
	is, err := f.object("initial_session")
	if err != nil {
		return nil, err
	}
	if is != nil && len(is.o.keys) > 0 {
		if c.Session, err = d.session(is); err != nil {
			return nil, err
		}
	}
	c.Extra = f.extra()
	return c, nil
}

// oldTurn converts {query, expected_tool_use: [{tool_name, tool_input}],
// expected_intermediate_agent_responses: [{author, text}], reference} as
// ADK does: the reference becomes the final response, in a model content,
// even when it is empty or absent.
func (d *decoder) oldTurn(path string, v any) (*Turn, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf(path, "want a turn {query, expected_tool_use, reference}, got %s", kind(v))
	}
	f := d.fields(path, o)
	if f.err != nil {
		return nil, f.err
	}
	query, err := f.str("query", true)
	if err != nil {
		return nil, err
	}
	reference, err := f.str("reference", false)
	if err != nil {
		return nil, err
	}
	t := &Turn{
		User:     genai.NewContentFromText(query, genai.RoleUser),
		Response: genai.NewContentFromText(reference, genai.RoleModel),
	}
	uses, _, err := f.list("expected_tool_use")
	if err != nil {
		return nil, err
	}
	for i, uv := range uses {
		upath := index(f.at("expected_tool_use"), i)
		uo, ok := uv.(*object)
		if !ok {
			return nil, d.errf(upath, "want {tool_name, tool_input}, got %s", kind(uv))
		}
		uf := d.fields(upath, uo)
		name, err := uf.str("tool_name", true)
		if err != nil {
			return nil, err
		}
		args, err := uf.state("tool_input")
		if err != nil {
			return nil, err
		}
		for k := range uf.extra() {
			return nil, d.errf(uf.at(k), "unknown field of an expected tool use (it has tool_name and tool_input)")
		}
		t.ToolCalls = append(t.ToolCalls, &genai.FunctionCall{Name: name, Args: args})
	}
	inter, _, err := f.list("expected_intermediate_agent_responses")
	if err != nil {
		return nil, err
	}
	for i, rv := range inter {
		rpath := index(f.at("expected_intermediate_agent_responses"), i)
		ro, ok := rv.(*object)
		if !ok {
			return nil, d.errf(rpath, "want {author, text}, got %s", kind(rv))
		}
		rf := d.fields(rpath, ro)
		author, err := rf.str("author", true)
		if err != nil {
			return nil, err
		}
		text, err := rf.str("text", false)
		if err != nil {
			return nil, err
		}
		for k := range rf.extra() {
			return nil, d.errf(rf.at(k), "unknown field of an intermediate response (it has author and text)")
		}
		t.Intermediate = append(t.Intermediate, AgentResponse{Author: author, Parts: []*genai.Part{{Text: text}}})
	}
	t.Extra = f.extra()
	return t, nil
}
