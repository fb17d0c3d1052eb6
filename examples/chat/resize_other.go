//go:build !unix

package main

import "os"

// resizeSignals returns nil: without SIGWINCH, the width is read again
// at each line only.
func resizeSignals() <-chan os.Signal { return nil }
