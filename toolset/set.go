package toolset

import (
	"fmt"
	"slices"
)

// A Set is a fixed collection of tools with distinct names: the toolkit a
// model is given. It is immutable once made and safe for concurrent use.
type Set struct {
	tools  []*Tool
	byName map[string]*Tool
}

// New returns a set holding tools in the order given. Each tool is checked
// as [Define] checks it (so literals are accepted); a nil tool, an invalid
// tool or two tools with the same name are an error, wrapping
// [ErrInvalidTool] or [ErrDuplicateTool].
func New(tools ...*Tool) (*Set, error) {
	s := &Set{tools: slices.Clone(tools), byName: make(map[string]*Tool, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("toolset: %w: tool %d is nil", ErrInvalidTool, i)
		}
		if err := t.Check(); err != nil {
			return nil, err
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("toolset: %w: %q is given twice", ErrDuplicateTool, t.Name)
		}
		s.byName[t.Name] = t
	}
	return s, nil
}

// MustNew is like [New] but panics on error.
func MustNew(tools ...*Tool) *Set {
	s, err := New(tools...)
	if err != nil {
		panic(err)
	}
	return s
}

// Tools returns the set's tools in the order they were given. The slice is
// the caller's to modify; the tools are shared.
func (s *Set) Tools() []*Tool {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tools)
}

// Len returns the number of tools in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// Lookup returns the tool with the given name. It is O(1).
func (s *Set) Lookup(name string) (*Tool, bool) {
	if s == nil {
		return nil, false
	}
	t, ok := s.byName[name]
	return t, ok
}

// Names returns the names of the set's tools, in order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return names
}
