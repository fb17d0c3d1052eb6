package main

import (
	"slices"
	"testing"
)

// -only selects exactly the contestants it names, the baseline first; the
// default selects every contestant but the opt-in ones.
func TestSelectContestants(t *testing.T) {
	keys := func(cs []contestant) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.key)
		}
		return out
	}
	for _, tc := range []struct {
		only string
		want []string
	}{
		{"agent-run", []string{"agent-run"}},
		{"agent-run-otel,raw", []string{"raw", "agent-run-otel"}},
		{"agent-run-otel-noop", []string{"agent-run-otel-noop"}},
	} {
		got, err := selectContestants(tc.only)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(got), tc.want) {
			t.Errorf("selectContestants(%q) = %v, want %v", tc.only, keys(got), tc.want)
		}
	}
	all, err := selectContestants("")
	if err != nil {
		t.Fatal(err)
	}
	got := keys(all)
	if got[0] != baselineKey || !slices.Contains(got, "agent-run-otel") || slices.Contains(got, "agent-run-otel-sync") || slices.Contains(got, "agent-run-otel-noop") {
		t.Errorf("default selection %v: want the baseline first, agent-run-otel, no opt-in variant", got)
	}
	if _, err := selectContestants("nope"); err == nil {
		t.Error("selectContestants(\"nope\") succeeded")
	}
}
