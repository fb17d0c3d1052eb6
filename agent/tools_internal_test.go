package agent

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// jsonLen must agree with encoding/json on every kind of character, or the
// cap would be off.
func TestJSONLenAgreesWithEncodingJSON(t *testing.T) {
	pieces := []string{"a", "é", "✓", "𝄞", "<", ">", "&", `"`, `\`, "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"\u2028", "\u2029", "\xff", "\xe2\x82", "\ufffd", " "}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		enc, _ := json.Marshal(s)
		if got := jsonLen(s); got != len(enc) {
			t.Fatalf("jsonLen(%q) = %d, encoding/json writes %d bytes", s, got, len(enc))
		}
	}
}

// The cap bounds the encoded JSON, whatever the escaping: before, 2 MiB of
// "<" under the 1 MiB default sent 6,290,379 bytes.
func TestCapOutputBoundsTheJSON(t *testing.T) {
	pieces := []string{"x", "<", "é", `"`, "\n", "\x01", "\xff", "𝄞"}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(out any, limit int) {
		t.Helper()
		res := capOutput(toolset.Result{Output: out}, limit)
		enc, err := json.Marshal(res.Output)
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := json.Marshal(out)
		switch {
		case len(orig) <= limit && string(enc) != string(orig):
			t.Fatalf("an output of %d bytes of JSON under the limit of %d was cut", len(orig), limit)
		case len(enc) > limit && len(orig) > limit:
			t.Fatalf("cut output is %d bytes of JSON, over the limit of %d", len(enc), limit)
		case len(orig) > limit && len(enc) < limit-8:
			t.Fatalf("cut output is %d bytes of JSON; the limit is %d: too much was dropped", len(enc), limit)
		}
	}
	for range 500 {
		var b strings.Builder
		for range rng.IntN(3000) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		limit := 300 + rng.IntN(3000)
		check(b.String(), limit)
		check(map[string]any{"text": b.String()}, limit)
	}
	const mib = 1 << 20
	check(strings.Repeat("<", 2*mib), mib)
}
