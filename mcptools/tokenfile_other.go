//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package mcptools

// lockFile locks nothing where there is no flock: only the lock within
// the process guards the token file (see TokenFile).
func lockFile(string) (unlock func(), err error) {
	return func() {}, nil
}
