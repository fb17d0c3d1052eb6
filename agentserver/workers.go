package agentserver

import (
	"sync"
	"time"
)

// workers runs functions on goroutines that it keeps between uses, each
// with the stack its work grew. A new goroutine's stack starts small and
// is copied each time it doubles; a run (the model's JSON, the loop) and
// the start of a request (decoding it) grow theirs several times, which
// cost a served run about a tenth of its CPU before the workers kept
// them. A worker idle for workerIdle exits, and close stops the idle ones
// and waits for all.
type workers struct {
	work   chan func() // taken by an idle worker
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

// workerIdle is how long a worker waits for more work before it exits.
const workerIdle = 10 * time.Second

func newWorkers() *workers {
	return &workers{work: make(chan func()), closed: make(chan struct{})}
}

// Go runs f on an idle worker, or on a new one.
func (p *workers) Go(f func()) {
	select {
	case p.work <- f:
	default:
		p.wg.Add(1)
		go p.worker(f)
	}
}

func (p *workers) worker(f func()) {
	defer p.wg.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil
		idle.Reset(workerIdle)
		select {
		case f = <-p.work:
		case <-idle.C:
			return
		case <-p.closed:
			return
		}
	}
}

// close stops the idle workers, and waits for the busy ones to finish
// their work and stop.
func (p *workers) close() {
	p.once.Do(func() { close(p.closed) })
	p.wg.Wait()
}
