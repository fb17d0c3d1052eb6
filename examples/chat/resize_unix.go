//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// resizeSignals returns the signals that say the terminal was resized
// (SIGWINCH).
func resizeSignals() <-chan os.Signal {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	return c
}
