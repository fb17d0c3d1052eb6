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
)

// TokenFile is a [LoginStore] that keeps the logins of every MCP server in
// one JSON file at path, readable and writable by the user alone: it is
// written with mode 0600, in a directory created with mode 0700, and
// replaced whole at each change, so that a crash never leaves half a file.
// A file that others may read or write (on Unix, any group or other
// permission bit) is refused with an error saying how to fix it, as ssh
// refuses such a key.
//
// A program's usual place for it is under os.UserConfigDir(). Two
// processes that change the file at once may lose one's change, and then
// that one's user logs in again.
func TokenFile(path string) LoginStore {
	return &tokenFile{path: path}
}

type tokenFile struct {
	path string
	mu   sync.Mutex
}

// tokenFileData is the file's content.
type tokenFileData struct {
	Logins map[string]json.RawMessage `json:"logins"`
}

// LoadLogin returns what is kept for server.
func (f *tokenFile) LoadLogin(server string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	return d.Logins[server], nil
}

// SaveLogin keeps data for server, or forgets it when data is nil.
func (f *tokenFile) SaveLogin(server string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.read()
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
	return f.write(append(b, '\n'))
}

// read reads the file; a missing file holds nothing.
func (f *tokenFile) read() (tokenFileData, error) {
	var d tokenFileData
	file, err := os.Open(f.path)
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
			f.path, perm, f.path)
	}
	if err := json.NewDecoder(io.LimitReader(file, 16<<20)).Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return d, fmt.Errorf("mcptools: reading the logins in %s: %w", f.path, err)
	}
	return d, nil
}

// write replaces the file with b, through a temporary file in the same
// directory, created readable by the user alone.
func (f *tokenFile) write(b []byte) (err error) {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*") // mode 0600
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
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("mcptools: keeping the logins: %w", err)
	}
	return nil
}
