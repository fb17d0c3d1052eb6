package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// The names of the metrics this package implements, as ADK names them in
// test_config.json and in results.
const (
	MetricToolTrajectory        = "tool_trajectory_avg_score"
	MetricResponseMatch         = "response_match_score"
	MetricFinalResponseMatch    = "final_response_match_v2"
	MetricRubricResponseQuality = "rubric_based_final_response_quality_v1"
	MetricRubricToolUse         = "rubric_based_tool_use_quality_v1"
)

// Criteria are the metrics to score a set with, and their thresholds: ADK's
// EvalConfig, read from a test_config.json file (see [LoadFile]).
type Criteria struct {
	// Metrics are the file's criteria, in file order.
	Metrics []Criterion
	// Custom describes metrics the file's criteria name that are written
	// in code (custom_metrics): ADK finds a Python function by
	// code_config.name; here Options.Custom maps the metric's name to a Go
	// [Metric].
	Custom map[string]CustomMetric
	// Simulator is user_simulator_config as written.
	Simulator json.RawMessage
	// Extra holds the keys ADK's format does not define.
	Extra map[string]json.RawMessage
}

// A Criterion is one metric of a criteria file and its settings: ADK's
// criterion, written either as a bare threshold or as an object.
type Criterion struct {
	// Metric names the metric ("tool_trajectory_avg_score").
	Metric string
	// Threshold is the score the metric must reach for a case to pass.
	Threshold float64
	// Bare records that the file gave the threshold alone
	// ("response_match_score": 0.8); it is written back the same way.
	Bare bool

	// Match and IgnoreArgs configure tool_trajectory_avg_score
	// (match_type, ignore_args).
	Match      Match
	IgnoreArgs bool
	// Judge configures a judged metric (judge_model_options); nil when not
	// given.
	Judge *JudgeOptions
	// Rubrics are a rubric-based metric's rubrics (rubrics).
	Rubrics []Rubric
	// Extra holds the criterion's other keys (ADK keeps them too).
	Extra map[string]json.RawMessage
}

// JudgeOptions are ADK's judge_model_options.
type JudgeOptions struct {
	// Model is judge_model; ADK's default is "gemini-2.5-flash".
	Model string
	// Config is judge_model_config.
	Config *genai.GenerateContentConfig
	// Samples is num_samples: how many times the judge is asked per turn;
	// zero means ADK's default, 5.
	Samples int
}

// A CustomMetric is an entry of custom_metrics.
type CustomMetric struct {
	// Code is code_config.name: where ADK finds the Python function.
	Code string
	// Description describes the metric.
	Description string
	// Extra holds the entry's other keys (metric_info…), as written.
	Extra map[string]json.RawMessage
}

// DefaultCriteria returns what ADK scores a set with when no criteria file
// is given: a tool trajectory that matches exactly at every turn, and a
// ROUGE-1 response match of at least 0.8.
func DefaultCriteria() *Criteria {
	return &Criteria{Metrics: []Criterion{
		{Metric: MetricToolTrajectory, Threshold: 1, Bare: true},
		{Metric: MetricResponseMatch, Threshold: 0.8, Bare: true},
	}}
}

// LoadCriteria reads a criteria file (test_config.json).
func LoadCriteria(path string) (*Criteria, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return parseCriteriaFile(data, path)
}

func parseCriteriaFile(data []byte, name string) (*Criteria, error) {
	d := &decoder{file: name}
	v, err := decodeOrdered(data)
	if err != nil {
		return nil, &FormatError{File: name, Msg: err.Error()}
	}
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf("", "want a criteria file (an object), got %s", kind(v))
	}
	f := d.fields("", o)
	if f.err != nil {
		return nil, f.err
	}
	return d.criteria(f)
}

func (d *decoder) criteria(f *fields) (*Criteria, error) {
	if f.err != nil {
		return nil, f.err
	}
	c := &Criteria{}
	cf, err := f.object("criteria")
	if err != nil {
		return nil, err
	}
	if cf != nil {
		// Metric names are keys: they are read as written.
		for i, name := range cf.o.keys {
			cf.used[i] = true
			cr, err := d.criterion(cf.at(name), name, cf.o.vals[i])
			if err != nil {
				return nil, err
			}
			c.Metrics = append(c.Metrics, *cr)
		}
	}
	custom, err := f.object("custom_metrics")
	if err != nil {
		return nil, err
	}
	if custom != nil {
		c.Custom = map[string]CustomMetric{}
		for i, name := range custom.o.keys {
			custom.used[i] = true
			path := custom.at(name)
			o, ok := custom.o.vals[i].(*object)
			if !ok {
				return nil, d.errf(path, "want a custom metric {code_config}, got %s", kind(custom.o.vals[i]))
			}
			mf := d.fields(path, o)
			if mf.err != nil {
				return nil, mf.err
			}
			var m CustomMetric
			code, err := mf.object("code_config")
			if err != nil {
				return nil, err
			}
			if code == nil {
				return nil, d.errf(mf.at("code_config"), "required")
			}
			if m.Code, err = code.str("name", true); err != nil {
				return nil, err
			}
			if m.Description, err = mf.str("description", false); err != nil {
				return nil, err
			}
			for k := range code.extra() {
				// ADK refuses args for custom metrics too (eval_config.py).
				return nil, d.errf(code.at(k), "not supported in a custom metric's code_config (it has name)")
			}
			m.Extra = mf.extra()
			c.Custom[name] = m
		}
	}
	if c.Simulator, err = f.raw("user_simulator_config"); err != nil {
		return nil, err
	}
	c.Extra = f.extra()
	return c, nil
}

func (d *decoder) criterion(path, name string, v any) (*Criterion, error) {
	c := &Criterion{Metric: name}
	if n, ok := v.(json.Number); ok {
		t, err := n.Float64()
		if err != nil {
			return nil, d.errf(path, "%v", err)
		}
		c.Threshold, c.Bare = t, true
		return c, nil
	}
	o, ok := v.(*object)
	if !ok {
		return nil, d.errf(path, "want a threshold (a number) or a criterion (an object), got %s", kind(v))
	}
	f := d.fields(path, o)
	if f.err != nil {
		return nil, f.err
	}
	if _, ok := f.get("threshold"); !ok {
		return nil, d.errf(f.at("threshold"), "required")
	}
	var err error
	if c.Threshold, err = f.float("threshold"); err != nil {
		return nil, err
	}
	if mv, ok := f.get("match_type"); ok {
		if c.Match, err = parseMatch(mv); err != nil {
			return nil, d.errf(f.at("match_type"), "%v", err)
		}
	}
	if iv, ok := f.get("ignore_args"); ok {
		b, isBool := iv.(bool)
		if !isBool {
			return nil, d.errf(f.at("ignore_args"), "want true or false, got %s", kind(iv))
		}
		c.IgnoreArgs = b
	}
	jf, err := f.object("judge_model_options")
	if err != nil {
		return nil, err
	}
	if jf != nil {
		j := &JudgeOptions{}
		if j.Model, err = jf.str("judge_model", false); err != nil {
			return nil, err
		}
		samples, err := jf.float("num_samples")
		if err != nil {
			return nil, err
		}
		if samples < 0 || samples != float64(int(samples)) {
			return nil, d.errf(jf.at("num_samples"), "want a positive whole number, got %v", samples)
		}
		j.Samples = int(samples)
		if cv, ok := jf.get("judge_model_config"); ok {
			j.Config = &genai.GenerateContentConfig{}
			if err := d.genaiValue(jf.at("judge_model_config"), cv, j.Config); err != nil {
				return nil, err
			}
		}
		for k := range jf.extra() {
			return nil, d.errf(jf.at(k), "unknown field of judge_model_options (it has judge_model, judge_model_config and num_samples)")
		}
		c.Judge = j
	}
	if c.Rubrics, err = d.rubrics(f, "rubrics"); err != nil {
		return nil, err
	}
	c.Extra = f.extra()
	return c, nil
}

// Match says how a tool trajectory is compared with the expected one
// (ADK's match_type).
type Match int

const (
	// MatchExact requires the same calls in the same order, no more, no
	// fewer (EXACT, ADK's default).
	MatchExact Match = iota
	// MatchInOrder requires the expected calls in order; other calls may
	// come between them (IN_ORDER).
	MatchInOrder
	// MatchAnyOrder requires each expected call to match a different
	// actual call, in any order; other calls may come too (ANY_ORDER).
	MatchAnyOrder
)

var matchNames = [...]string{"EXACT", "IN_ORDER", "ANY_ORDER"}

// String returns ADK's name of the match type: EXACT, IN_ORDER, ANY_ORDER.
func (m Match) String() string {
	if m >= 0 && int(m) < len(matchNames) {
		return matchNames[m]
	}
	return "Match(" + strconv.Itoa(int(m)) + ")"
}

// parseMatch reads match_type as ADK does: the enum's number (0, 1, 2) or
// its name, in any case, with - or spaces for _.
func parseMatch(v any) (Match, error) {
	switch v := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(v.String())
		if err == nil && n >= 0 && n < len(matchNames) {
			return Match(n), nil
		}
	case string:
		norm := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(strings.TrimSpace(v)))
		for i, name := range matchNames {
			if norm == name {
				return Match(i), nil
			}
		}
	}
	b, _ := marshalValue(v)
	return 0, fmt.Errorf("want EXACT, IN_ORDER or ANY_ORDER (or 0, 1, 2), got %s", b)
}

// MarshalJSON writes the criteria as ADK's test_config.json.
func (c *Criteria) MarshalJSON() ([]byte, error) { return marshalObject(c.object()) }

// WriteFile writes the criteria to path as ADK's test_config.json,
// indented.
func (c *Criteria) WriteFile(path string) error {
	o, err := c.object()
	return writeObject(path, o, err)
}

func (c *Criteria) object() (*object, error) {
	o := &object{}
	crit := &object{}
	for _, m := range c.Metrics {
		if m.Metric == "" {
			return nil, fmt.Errorf("eval: a criterion has no Metric name")
		}
		if _, dup := crit.get(m.Metric); dup {
			return nil, fmt.Errorf("eval: criterion %q is given twice", m.Metric)
		}
		v, err := m.value()
		if err != nil {
			return nil, err
		}
		crit.add(m.Metric, v)
	}
	o.add("criteria", crit)
	if len(c.Custom) > 0 {
		custom := &object{}
		for _, name := range sortedKeys(c.Custom) {
			m := c.Custom[name]
			mo := &object{}
			code := (&object{}).add("name", m.Code)
			mo.add("code_config", code)
			if m.Description != "" {
				mo.add("description", m.Description)
			}
			if err := addExtra(mo, m.Extra); err != nil {
				return nil, err
			}
			custom.add(name, mo)
		}
		o.add("custom_metrics", custom)
	}
	if len(c.Simulator) > 0 {
		o.add("user_simulator_config", c.Simulator)
	}
	if err := addExtra(o, c.Extra); err != nil {
		return nil, err
	}
	return o, nil
}

func (m Criterion) value() (any, error) {
	simple := !m.IgnoreArgs && m.Match == MatchExact && m.Judge == nil && len(m.Rubrics) == 0 && len(m.Extra) == 0
	if m.Bare && simple {
		return json.Number(formatFloat(m.Threshold)), nil
	}
	o := (&object{}).add("threshold", json.Number(formatFloat(m.Threshold)))
	if m.Match != MatchExact {
		if m.Match < 0 || int(m.Match) >= len(matchNames) {
			return nil, fmt.Errorf("eval: criterion %q: unknown %v", m.Metric, m.Match)
		}
		o.add("match_type", m.Match.String())
	}
	if m.IgnoreArgs {
		o.add("ignore_args", true)
	}
	if j := m.Judge; j != nil {
		jo := &object{}
		if j.Model != "" {
			jo.add("judge_model", j.Model)
		}
		if j.Config != nil {
			cv, err := genaiObject(j.Config)
			if err != nil {
				return nil, fmt.Errorf("eval: criterion %q: judge_model_config: %w", m.Metric, err)
			}
			jo.add("judge_model_config", cv)
		}
		if j.Samples != 0 {
			jo.add("num_samples", j.Samples)
		}
		o.add("judge_model_options", jo)
	}
	if len(m.Rubrics) > 0 {
		rs, err := rubricsValue(m.Rubrics)
		if err != nil {
			return nil, err
		}
		o.add("rubrics", rs)
	}
	if err := addExtra(o, m.Extra); err != nil {
		return nil, err
	}
	return o, nil
}

// formatFloat writes a float as Python's json does for the values ADK
// files hold: 1.0 as 1.0, 0.8 as 0.8, a timestamp without an exponent.
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

// metrics returns the metrics the criteria name, built with judge for the
// judged ones and taken from custom for those this package does not
// implement (or that custom_metrics names).
func (c *Criteria) metrics(judge *Judge, custom map[string]Metric) []Metric {
	var out []Metric
	for i := range c.Metrics {
		cr := &c.Metrics[i]
		var m Metric
		if cm, ok := custom[cr.Metric]; ok {
			m = cm
			if f, ok := cm.(funcMetric); ok {
				f.threshold = cr.Threshold
				m = f
			}
		} else {
			switch cr.Metric {
			case MetricToolTrajectory:
				t := ToolTrajectory{Threshold: cr.Threshold, Match: cr.Match}
				if cr.IgnoreArgs {
					t.Args = ArgsIgnore
				}
				m = t
			case MetricResponseMatch:
				m = ResponseMatch{Threshold: cr.Threshold}
			case MetricFinalResponseMatch:
				m = FinalResponseMatch{Judge: judge.forCriterion(cr), Threshold: cr.Threshold}
			case MetricRubricResponseQuality:
				m = ResponseQuality{Judge: judge.forCriterion(cr), Threshold: cr.Threshold, Rubrics: cr.Rubrics}
			case MetricRubricToolUse:
				m = ToolUseQuality{Judge: judge.forCriterion(cr), Threshold: cr.Threshold, Rubrics: cr.Rubrics}
			default:
				m = unknownMetric{name: cr.Metric, threshold: cr.Threshold}
			}
		}
		out = append(out, criterionMetric{Metric: m, criterion: cr})
	}
	return out
}

// criterionMetric is a metric built from a criterion, which its scores
// record.
type criterionMetric struct {
	Metric
	criterion *Criterion
}

func (m criterionMetric) Evaluate(ctx context.Context, in *Input) (*Score, error) {
	s, err := m.Metric.Evaluate(ctx, in)
	if s != nil {
		s.Criterion = m.criterion
	}
	return s, err
}

// unknownMetric is a metric a criteria file names that nothing provides:
// ADK scores it NOT_EVALUATED too.
type unknownMetric struct {
	name      string
	threshold float64
}

func (m unknownMetric) Name() string { return m.name }

func (m unknownMetric) Evaluate(context.Context, *Input) (*Score, error) {
	return NotEvaluatedScore(m.threshold, "unknown metric %q: package eval does not implement it; provide it in Options.Custom", m.name), nil
}
