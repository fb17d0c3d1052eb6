package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/genai"
)

// MarshalJSON writes the set as ADK writes an eval set: snake_case keys,
// fields at their default left out, genai values with URL-safe base64, and
// the Extra keys of every level written back. ADK reads it; so does
// [Parse].
func (s *Set) MarshalJSON() ([]byte, error) { return marshalObject(s.object()) }

// WriteFile writes the set to path as an ADK eval set, indented as ADK
// indents it. Criteria are not written: see [Criteria.WriteFile]. Loading
// the file gives the same set.
func (s *Set) WriteFile(path string) error {
	o, err := s.object()
	return writeObject(path, o, err)
}

func (s *Set) object() (*object, error) {
	if s.ID == "" {
		return nil, fmt.Errorf("eval: the set has no ID (eval_set_id is required)")
	}
	o := (&object{}).add("eval_set_id", s.ID)
	if s.Name != "" {
		o.add("name", s.Name)
	}
	if s.Description != "" {
		o.add("description", s.Description)
	}
	cases := make([]any, len(s.Cases))
	seen := map[string]bool{}
	for i := range s.Cases {
		c := &s.Cases[i]
		if seen[c.ID] {
			return nil, fmt.Errorf("eval: two cases have the ID %q", c.ID)
		}
		seen[c.ID] = true
		co, err := c.object()
		if err != nil {
			return nil, fmt.Errorf("eval: case %q: %w", c.ID, err)
		}
		cases[i] = co
	}
	o.add("eval_cases", cases)
	if s.Created != 0 {
		o.add("creation_timestamp", json.Number(formatFloat(s.Created)))
	}
	return o, addExtra(o, s.Extra)
}

func (c *Case) object() (*object, error) {
	if c.ID == "" {
		return nil, fmt.Errorf("no ID (eval_id is required)")
	}
	switch {
	case c.Scenario != nil && len(c.Turns) > 0:
		return nil, fmt.Errorf("both Turns and Scenario are set: a case has one")
	case c.Scenario == nil && len(c.Turns) == 0:
		return nil, fmt.Errorf("neither Turns nor Scenario is set: a case has one")
	}
	o := (&object{}).add("eval_id", c.ID)
	if len(c.Turns) > 0 {
		turns := make([]any, len(c.Turns))
		for i := range c.Turns {
			t, err := c.Turns[i].object()
			if err != nil {
				return nil, fmt.Errorf("turn %d: %w", i+1, err)
			}
			turns[i] = t
		}
		o.add("conversation", turns)
	}
	if sc := c.Scenario; sc != nil {
		so := (&object{}).add("starting_prompt", sc.StartingPrompt).add("conversation_plan", sc.Plan)
		if len(sc.Persona) > 0 {
			so.add("user_persona", sc.Persona)
		}
		if err := addExtra(so, sc.Extra); err != nil {
			return nil, err
		}
		o.add("conversation_scenario", so)
	}
	if si := c.Session; si != nil {
		so := (&object{}).add("app_name", si.AppName).add("user_id", si.UserID)
		if len(si.State) > 0 {
			so.add("state", si.State)
		}
		if err := addExtra(so, si.Extra); err != nil {
			return nil, err
		}
		o.add("session_input", so)
	}
	if c.Created != 0 {
		o.add("creation_timestamp", json.Number(formatFloat(c.Created)))
	}
	if len(c.Rubrics) > 0 {
		rs, err := rubricsValue(c.Rubrics)
		if err != nil {
			return nil, err
		}
		o.add("rubrics", rs)
	}
	if len(c.FinalState) > 0 {
		o.add("final_session_state", c.FinalState)
	}
	return o, addExtra(o, c.Extra)
}

func (t *Turn) object() (*object, error) {
	if t.User == nil {
		return nil, fmt.Errorf("no User message (user_content is required)")
	}
	o := &object{}
	if t.ID != "" {
		o.add("invocation_id", t.ID)
	}
	u, err := genaiObject(t.User)
	if err != nil {
		return nil, fmt.Errorf("user_content: %w", err)
	}
	o.add("user_content", u)
	if t.Response != nil {
		r, err := genaiObject(t.Response)
		if err != nil {
			return nil, fmt.Errorf("final_response: %w", err)
		}
		o.add("final_response", r)
	}
	data, err := t.intermediateObject()
	if err != nil {
		return nil, err
	}
	if data != nil {
		o.add("intermediate_data", data)
	}
	if t.Created != 0 {
		o.add("creation_timestamp", json.Number(formatFloat(t.Created)))
	}
	if len(t.Rubrics) > 0 {
		rs, err := rubricsValue(t.Rubrics)
		if err != nil {
			return nil, err
		}
		o.add("rubrics", rs)
	}
	if len(t.AppDetails) > 0 {
		o.add("app_details", t.AppDetails)
	}
	return o, addExtra(o, t.Extra)
}

// intermediateObject writes intermediate_data in the form the turn has,
// or returns nil when the turn has none.
func (t *Turn) intermediateObject() (*object, error) {
	o := &object{}
	if t.Events != nil {
		if len(t.ToolCalls) > 0 || len(t.ToolResponses) > 0 || len(t.Intermediate) > 0 {
			return nil, fmt.Errorf("both Events and ToolCalls, ToolResponses or Intermediate are set: intermediate_data has one form or the other")
		}
		events := make([]any, len(t.Events))
		for i, e := range t.Events {
			eo := (&object{}).add("author", e.Author)
			if e.Content != nil {
				c, err := genaiObject(e.Content)
				if err != nil {
					return nil, fmt.Errorf("invocation_events[%d]: %w", i, err)
				}
				eo.add("content", c)
			}
			events[i] = eo
		}
		o.add("invocation_events", events)
		return o, addExtra(o, t.DataExtra)
	}
	if len(t.ToolCalls) > 0 {
		l, err := genaiList(t.ToolCalls)
		if err != nil {
			return nil, fmt.Errorf("tool_uses: %w", err)
		}
		o.add("tool_uses", l)
	}
	if len(t.ToolResponses) > 0 {
		l, err := genaiList(t.ToolResponses)
		if err != nil {
			return nil, fmt.Errorf("tool_responses: %w", err)
		}
		o.add("tool_responses", l)
	}
	if len(t.Intermediate) > 0 {
		l := make([]any, len(t.Intermediate))
		for i, r := range t.Intermediate {
			parts, err := genaiList(r.Parts)
			if err != nil {
				return nil, fmt.Errorf("intermediate_responses[%d]: %w", i, err)
			}
			l[i] = []any{r.Author, parts}
		}
		o.add("intermediate_responses", l)
	}
	if err := addExtra(o, t.DataExtra); err != nil {
		return nil, err
	}
	if len(o.keys) == 0 {
		return nil, nil
	}
	return o, nil
}

// genaiList writes a list of genai values.
func genaiList[T any](vs []*T) ([]any, error) {
	out := make([]any, len(vs))
	for i, v := range vs {
		if v == nil {
			return nil, fmt.Errorf("[%d] is nil", i)
		}
		o, err := genaiObject(v)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = o
	}
	return out, nil
}

// genaiObject writes a genai value as ADK does: its JSON with snake_case
// keys (the user's keys, in arguments and responses, as they are) and
// URL-safe base64.
func genaiObject(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d, err := decodeOrdered(b)
	if err != nil {
		return nil, err
	}
	out := convertKeys(d, toSnake, false)
	keepEmpty(out, v)
	return out, nil
}

// keepEmpty puts back the empty arguments and responses that genai's
// omitempty drops: {"args": {}} and a call without args differ for ADK
// (its trajectory metric compares args, and None is not {}).
func keepEmpty(o any, v any) {
	obj, ok := o.(*object)
	if !ok {
		return
	}
	switch v := v.(type) {
	case *genai.Content:
		if parts, ok := obj.get("parts"); ok {
			if l, ok := parts.([]any); ok && len(l) == len(v.Parts) {
				for i, p := range v.Parts {
					keepEmpty(l[i], p)
				}
			}
		}
	case *genai.Part:
		if v.FunctionCall != nil {
			if fc, ok := obj.get("function_call"); ok {
				keepEmpty(fc, v.FunctionCall)
			}
		}
		if v.FunctionResponse != nil {
			if fr, ok := obj.get("function_response"); ok {
				keepEmpty(fr, v.FunctionResponse)
			}
		}
	case *genai.FunctionCall:
		if v.Args != nil && len(v.Args) == 0 {
			insertBefore(obj, "name", "args", map[string]any{})
		}
	case *genai.FunctionResponse:
		if v.Response != nil && len(v.Response) == 0 {
			obj.add("response", map[string]any{})
		}
	}
}

// insertBefore inserts key k with value val before key before, or at the
// end, unless o has k already.
func insertBefore(o *object, before, k string, val any) {
	if _, ok := o.get(k); ok {
		return
	}
	for i, key := range o.keys {
		if key == before {
			o.keys = slices.Insert(o.keys, i, k)
			o.vals = slices.Insert(o.vals, i, val)
			return
		}
	}
	o.add(k, val)
}

func rubricsValue(rs []Rubric) ([]any, error) {
	out := make([]any, len(rs))
	seen := map[string]bool{}
	for i, r := range rs {
		if r.ID == "" {
			return nil, fmt.Errorf("rubric %d has no ID (rubric_id is required)", i+1)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("two rubrics have the ID %q", r.ID)
		}
		seen[r.ID] = true
		o := (&object{}).add("rubric_id", r.ID).add("rubric_content", (&object{}).add("text_property", r.Text))
		if r.Description != "" {
			o.add("description", r.Description)
		}
		if r.Type != "" {
			o.add("type", r.Type)
		}
		if err := addExtra(o, r.Extra); err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// addExtra appends the extra keys to o, sorted, refusing one that o
// already has.
func addExtra(o *object, extra map[string]json.RawMessage) error {
	for _, k := range sortedKeys(extra) {
		_, dup := o.get(k)
		if _, snake := o.get(toSnake(k)); dup || snake {
			return fmt.Errorf("eval: Extra key %q is a field of the format", k)
		}
		if !json.Valid(extra[k]) {
			return fmt.Errorf("eval: Extra key %q: not valid JSON", k)
		}
		o.add(k, extra[k])
	}
	return nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
