package eval_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/eval"
)

// FuzzParse checks that no input makes Parse panic, and that a set it
// reads survives a write and a read unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", "*.json"))
	files = append(files, filepath.Join("..", "examples", "eval", "demo.evalset.json"), filepath.Join("..", "examples", "eval", "test_config.json"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data, filepath.Base(file))
		}
	}
	f.Add([]byte(`[{"query": "hi", "expected_tool_use": [{"tool_name": "t", "tool_input": {"a": 1}}], "reference": "ho"}]`), "old.test.json")
	f.Add([]byte(`[{"name": "n", "data": [{"query": "hi"}], "initial_session": {"user_id": "u", "state": {"k": [1, "x"]}}}]`), "named.evalset.json")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		set, err := eval.Parse(data, name)
		if err != nil || len(set.Cases) == 0 {
			return
		}
		out, err := set.MarshalJSON()
		if err != nil {
			return // a set Parse reads may hold what the format cannot write (an invalid Extra, for one)
		}
		back, err := eval.Parse(out, name)
		if err != nil {
			t.Fatalf("Parse of MarshalJSON's output: %v\n%s", err, out)
		}
		back.Criteria = set.Criteria
		if diff := cmp.Diff(set, back); diff != "" {
			t.Fatalf("a set written and read back differs (-read +reread):\n%s\nwritten:\n%s", diff, out)
		}
	})
}
