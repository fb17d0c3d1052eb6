//go:build unix

package mcptools_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used, user and system, on
// all its threads: what a benchmark's calls cost whatever else the machine
// runs, where wall time also counts the waits for a CPU.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
