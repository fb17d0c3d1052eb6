//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package filelock

import "sync"

// locks holds a mutex per path: without flock, a lock excludes the
// goroutines of this process only.
var locks sync.Map

// Lock locks path within the process (there is no flock here to exclude
// other processes), and returns what unlocks it.
func Lock(path string) (unlock func(), err error) {
	v, _ := locks.LoadOrStore(path, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}
