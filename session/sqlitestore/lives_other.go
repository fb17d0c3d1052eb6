//go:build !unix

package sqlitestore

import (
	"errors"
	"fmt"
	"os"
)

// livesSupported says whether this platform has the file locks lives
// need: not here.
const livesSupported = false

func (l *lives) lock(string) (*os.File, error) {
	return nil, fmt.Errorf("lives need flock: %w", errors.ErrUnsupported)
}

// alive cannot tell: no claim of zero lease is made here, so none is
// met but another platform's (a file shared across machines, which this
// package does not support).
func (l *lives) alive(string, bool) (bool, error) {
	return true, fmt.Errorf("lives need flock: %w", errors.ErrUnsupported)
}
