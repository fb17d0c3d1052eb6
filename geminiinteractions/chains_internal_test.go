package geminiinteractions

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// What Config.MaxRememberedBytes counts is what the remembered
// interactions take in memory, within 15%: here 500 interactions of one
// user message and one answer each, the messages of several sizes,
// remembered as requests remember them (measured: 0.70 of the count for
// empty messages, 0.84 for 1,000 bytes, 1.05 for 4 KiB, 1.01 for 40 KB).
func TestRememberedMemoryBounded(t *testing.T) {
	for _, size := range []int{0, 1000, 4096, 40000} {
		const n = 500
		m := &Models{chains: newChains(n, 1<<40)}
		pad := strings.Repeat("x", size)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			contents := []*genai.Content{genai.NewContentFromText(fmt.Sprintf("Message %d.%s", i, pad), genai.RoleUser)}
			p := &request{m: m, model: "gemini-3-flash-preview", contents: contents, store: true,
				steps: make([][]byte, len(contents)), fps: make([]fingerprint, len(contents))}
			p.input(0)
			p.remember(fmt.Sprintf("v1_ChdpbnRlcmFjdGlvbi0%08d", i), genai.NewContentFromText(fmt.Sprintf("Answer %d.", i), genai.RoleModel))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held, counted := m.chains.held()
		retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		ratio := float64(retained) / float64(counted)
		t.Logf("messages of %d bytes: %d bytes retained, %d counted: %.2f", size, retained, counted, ratio)
		if held != n || ratio > 1.15 {
			t.Errorf("messages of %d bytes: %d interactions retain %d bytes, %.2f times the %d counted; want at most 1.15", size, held, retained, ratio, counted)
		}
		runtime.KeepAlive(m)
	}
}

// BenchmarkMatchLongConversation is what the request of turn 101 of a
// conversation whose 100 interactions are remembered takes to find the
// one it continues, and to know the server holds its history.
func BenchmarkMatchLongConversation(b *testing.B) {
	m := &Models{chains: newChains(DefaultMaxInteractions, DefaultMaxRememberedBytes)}
	const model = "gemini-3-flash-preview"
	var history []*genai.Content
	for i := range 100 {
		history = append(history, genai.NewContentFromText(fmt.Sprintf("Message %d.", i), genai.RoleUser))
		p, err := m.plan(model, history, nil, false)
		if err != nil {
			b.Fatal(err)
		}
		p.input(p.held)
		answer := genai.NewContentFromText(fmt.Sprintf("Answer %d.", i), genai.RoleModel)
		p.remember(fmt.Sprintf("interaction-%d", i), answer)
		history = append(history, answer)
	}
	next := append(history, genai.NewContentFromText("One more.", genai.RoleUser))
	b.ReportAllocs()
	for b.Loop() {
		p, err := m.plan(model, next, nil, false)
		if err != nil || p.held != len(history) {
			b.Fatal(err, p.held)
		}
	}
}
