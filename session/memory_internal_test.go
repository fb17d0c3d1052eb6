package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/genai"
)

// Random writes to a small Memory keep its accounting true: bytes is the
// sum of what it holds, pinned the part it may not forget, and it stays
// within MaxBytes.
func TestMemoryAccounting(t *testing.T) {
	ctx := context.Background()
	m := &Memory{MaxBytes: 5000}
	rng := rand.New(rand.NewPCG(1, 2))
	runs := map[string]string{}
	for step := range 5000 {
		id := fmt.Sprint("c", rng.IntN(6))
		n := rng.IntN(400)
		switch op := rng.IntN(6); op {
		case 0:
			m.Append(ctx, id, genai.Text(string(make([]byte, n))))
		case 1:
			run := fmt.Sprint("r", step)
			if m.BeginRun(ctx, id, run, Claim{}, [][]byte{make([]byte, n)}) == nil {
				runs[id] = run
			}
		case 2:
			m.AppendRun(ctx, id, runs[id], Claim{}, [][]byte{make([]byte, n)})
		case 3:
			m.EndRun(ctx, id, runs[id], Claim{}, genai.Text(string(make([]byte, n))))
		case 4:
			m.EndRun(ctx, id, runs[id], Claim{}, nil)
		case 5:
			if rng.IntN(4) == 0 {
				m.Delete(ctx, id)
			}
		}
		var bytes, pinned int64
		for id, c := range m.convs {
			bytes += c.bytes
			if m.runs[id] != nil {
				pinned += c.bytes
			}
		}
		for _, j := range m.runs {
			var size int64
			for _, e := range j.entries {
				size += int64(len(e))
			}
			if size != j.bytes {
				t.Fatalf("step %d: a journal of %d bytes counts %d", step, size, j.bytes)
			}
			bytes += j.bytes
			pinned += j.bytes
		}
		if bytes != m.bytes || pinned != m.pinned || m.bytes > m.MaxBytes || m.lru.Len() != len(m.convs) || len(m.ids) != len(m.convs) {
			t.Fatalf("step %d: bytes %d (counted %d), pinned %d (counted %d), MaxBytes %d, %d conversations, %d in lru, %d ids",
				step, m.bytes, bytes, m.pinned, pinned, m.MaxBytes, len(m.convs), m.lru.Len(), len(m.ids))
		}
	}
	if len(m.runs) == 0 || len(m.convs) == 0 {
		t.Fatalf("%d runs, %d conversations at the end: the test exercised little", len(m.runs), len(m.convs))
	}
}
