//go:build !unix

package artifact

// syncDir does nothing where a folder cannot be opened to be synced.
func syncDir(string) error { return nil }
