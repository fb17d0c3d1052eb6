//go:build unix

package artifact

import "os"

// syncDir syncs a folder, so that the names linked, renamed or removed in
// it are on disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
