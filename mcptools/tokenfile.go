package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/toolnexus/toolnexus-go/internal/filelock"
)

// TokenFile is a [LoginStore] that keeps the logins of every MCP server in
// one JSON file at path, readable and writable by the user alone: it is
// written with mode 0600, in a directory created with mode 0700, and
// replaced whole at each change (a temporary file beside it, synced, then
// renamed over it), so that a crash never leaves half a file. A file that
// others may read or write (on Unix, any group or other permission bit) is
// refused with an error saying how to fix it, as ssh refuses such a key.
//
// Each change reads the file, changes one login and writes the file under
// a lock, so that changes made at once are all kept, whether by Logins of
// one program (each with its TokenFile value, however it spells the path:
// the path is made absolute, and symbolic links are followed to the file
// they lead to) or by several programs: across processes, the lock is an
// advisory lock (flock) of path+".lock", a file created beside it with mode
// 0600 and left there. On systems without flock (Windows, Plan 9,
// WebAssembly…) only the lock within the process holds, and two processes
// that change the file at once may lose one's change, whose user then logs
// in again.
//
// A program's usual place for it is under os.UserConfigDir().
func TokenFile(path string) LoginStore {
	return &tokenFile{path: path}
}

type tokenFile struct {
	path string
}

// tokenFileData is the file's content.
type tokenFileData struct {
	Logins map[string]json.RawMessage `json:"logins"`
}

// LoadLogin returns what is kept for server.
func (f *tokenFile) LoadLogin(server string) ([]byte, error) {
	path := resolve(f.path)
	defer lockPath(path)()
	d, err := read(path)
	if err != nil {
		return nil, err
	}
	return d.Logins[server], nil
}

// SaveLogin keeps data for server, or forgets it when data is nil.
func (f *tokenFile) SaveLogin(server string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	path := resolve(f.path)
	defer lockPath(path)()
	unlock, err := filelock.Lock(path + ".lock")
	if err != nil {
		return fmt.Errorf("mcptools: locking the logins: %w", err)
	}
	defer unlock()
	d, err := read(path)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		d = tokenFileData{} // unreadable: replaced by one that can be read
	case err != nil:
		return err
	}
	if d.Logins == nil {
		d.Logins = map[string]json.RawMessage{}
	}
	if data == nil {
		if _, ok := d.Logins[server]; !ok {
			return nil
		}
		delete(d.Logins, server)
	} else {
		d.Logins[server] = data
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return write(path, append(b, '\n'))
}

// pathLocks guards each token file of this process, by its resolved path,
// for as long as the process runs (a program keeps a few).
var pathLocks = struct {
	sync.Mutex
	m map[string]*sync.Mutex
}{m: map[string]*sync.Mutex{}}

// lockPath locks the token file at path within this process, and returns
// the function that unlocks it.
func lockPath(path string) (unlock func()) {
	pathLocks.Lock()
	mu := pathLocks.m[path]
	if mu == nil {
		mu = &sync.Mutex{}
		pathLocks.m[path] = mu
	}
	pathLocks.Unlock()
	mu.Lock()
	return mu.Unlock
}

// resolve returns path made absolute, through the symbolic links of the
// file or, when it does not exist yet, of its directory.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// read reads the token file at path; a missing file holds nothing.
func read(path string) (tokenFileData, error) {
	var d tokenFileData
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("mcptools: reading the logins: %w", err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return d, fmt.Errorf("mcptools: reading the logins: %w", err)
	}
	if perm := info.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return d, fmt.Errorf("mcptools: %s holds OAuth tokens but is open to others (mode %v): make it yours alone with chmod 600 %s",
			path, perm, path)
	}
	if err := json.NewDecoder(io.LimitReader(file, 16<<20)).Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return d, fmt.Errorf("mcptools: reading the logins in %s: %w", path, err)
	}
	return d, nil
}

// write replaces the token file at path with b, through a temporary file
// in the same directory, created readable by the user alone, synced, then
// renamed over it.
func write(path string, b []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	return nil
}
