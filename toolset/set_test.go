package toolset_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/toolset"
)

func TestNew(t *testing.T) {
	a := toolset.MustDefine(toolset.Tool{Name: "a", Run: noop})
	b := &toolset.Tool{Name: "b", Run: noop} // a literal is accepted
	c := toolset.MustDefine(toolset.Tool{Name: "c", Run: noop})
	s, err := toolset.New(c, a, b)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	if got := strings.Join(s.Names(), ","); got != "c,a,b" {
		t.Errorf("Names() = %s, want the order given", got)
	}
	tools := s.Tools()
	if len(tools) != 3 || tools[0] != c || tools[2] != b || s.Len() != 3 {
		t.Errorf("Tools() = %v", tools)
	}
	tools[0] = nil // the caller's copy
	if s.Tools()[0] != c {
		t.Error("modifying Tools()'s result changed the set")
	}
	if got, ok := s.Lookup("b"); !ok || got != b {
		t.Errorf("Lookup(b) = %v, %v", got, ok)
	}
	if _, ok := s.Lookup("zzz"); ok {
		t.Error("Lookup(zzz) found something")
	}
}

func TestNewErrors(t *testing.T) {
	a := toolset.MustDefine(toolset.Tool{Name: "a", Run: noop})
	for _, tc := range []struct {
		name    string
		tools   []*toolset.Tool
		wantErr string
		is      error
	}{
		{"duplicate", []*toolset.Tool{a, toolset.MustDefine(toolset.Tool{Name: "a", Run: noop})}, `duplicate tool name: "a" is given twice`, toolset.ErrDuplicateTool},
		{"same pointer twice", []*toolset.Tool{a, a}, `"a" is given twice`, toolset.ErrDuplicateTool},
		{"nil", []*toolset.Tool{a, nil}, "invalid tool: tool 1 is nil", toolset.ErrInvalidTool},
		{"invalid literal", []*toolset.Tool{{Name: "x y", Run: noop}}, `invalid tool "x y": name contains ' '`, toolset.ErrInvalidTool},
		{"literal without Run", []*toolset.Tool{{Name: "x"}}, `invalid tool "x": Run is nil`, toolset.ErrInvalidTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolset.New(tc.tools...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, tc.is) {
				t.Errorf("New() = %v, want %v containing %q", err, tc.is, tc.wantErr)
			}
		})
	}
}

func TestEmptyAndNilSet(t *testing.T) {
	s := toolset.MustNew()
	if s.Len() != 0 || len(s.Tools()) != 0 {
		t.Errorf("empty set has tools")
	}
	var nilSet *toolset.Set
	if _, ok := nilSet.Lookup("a"); ok || nilSet.Len() != 0 || nilSet.Tools() != nil || nilSet.Names() != nil {
		t.Error("nil set is not empty")
	}
}

func TestMustNewPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustNew(nil) did not panic")
		}
	}()
	toolset.MustNew(nil)
}

func TestLookupConcurrent(t *testing.T) {
	s := toolset.MustNew(toolset.MustDefine(toolset.Tool{Name: "a", Run: noop}))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				if _, ok := s.Lookup("a"); !ok {
					t.Error("Lookup(a) failed")
					return
				}
			}
		}()
	}
	wg.Wait()
}
