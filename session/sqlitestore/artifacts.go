package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/internal/artifactrows"
)

// MaxArtifactSize is the largest file the artifact store of a Store keeps
// (SaveOptions.MaxSize may lower it): 64 MiB, in rows of ArtifactChunk
// bytes, so that no row is larger than a chunk and a file's bytes are
// read a chunk at a time.
const MaxArtifactSize = 64 << 20

// ArtifactChunk is the size of the rows a file's bytes are kept in.
const ArtifactChunk = 256 << 10

// artifactSchema creates the tables of the artifact store, beside the
// session tables (and apart from their schema version: these are created
// when the artifact store is first used). A file's version is NULL while
// its bytes are being written; artifact_names keeps the highest version
// each name was given, so that a number is never given twice.
const artifactSchema = `
CREATE TABLE IF NOT EXISTS artifact_names (
	owner  TEXT    NOT NULL,
	thread TEXT    NOT NULL,
	name   TEXT    NOT NULL,
	last   INTEGER NOT NULL, -- the highest version given
	PRIMARY KEY (owner, thread, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifact_files (
	id           INTEGER PRIMARY KEY,
	owner        TEXT    NOT NULL,
	thread       TEXT    NOT NULL,
	name         TEXT    NOT NULL,
	version      INTEGER,          -- NULL while the bytes are written
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT    NOT NULL,
	chunk        INTEGER NOT NULL, -- the size of its chunks
	created      INTEGER NOT NULL  -- Unix nanoseconds
);
CREATE UNIQUE INDEX IF NOT EXISTS artifact_files_by_name ON artifact_files (owner, thread, name, version);
CREATE TABLE IF NOT EXISTS artifact_chunks (
	file INTEGER NOT NULL,
	seq  INTEGER NOT NULL, -- from 0, in order
	data BLOB    NOT NULL,
	PRIMARY KEY (file, seq)
) WITHOUT ROWID;`

// stagedLifetime is how long the bytes of a save that never finished (its
// process died) are kept before Artifacts deletes them.
const stagedLifetime = 24 * time.Hour

// Artifacts is an [artifact.Store] in the Store's SQLite file: versioned
// files beside the conversations, surviving restarts as they do. Get it
// with [Store.Artifacts]; it is safe for concurrent use, by goroutines
// and processes.
//
// A save writes the file's bytes first, in rows of ArtifactChunk bytes
// (a transaction per 4 MiB, so that the file's write lock is never held
// while the bytes are read from their source), under a version that is
// not yet one; then one short transaction checks the user's quota, takes
// the next version number of the name and gives it to the file. A reader
// sees a version once that transaction committed: whole. Files are at
// most MaxArtifactSize.
type Artifacts struct {
	s *Store
}

var _ artifact.Store = (*Artifacts)(nil)

// Artifacts returns the store's artifact store, creating its tables when
// they do not exist, and deleting what saves that never finished left
// behind.
func (s *Store) Artifacts(ctx context.Context) (*Artifacts, error) {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, artifactSchema); err != nil {
			return err
		}
		stale := time.Now().Add(-stagedLifetime).UnixNano()
		if _, err := tx.ExecContext(ctx, `DELETE FROM artifact_chunks WHERE file IN
			(SELECT id FROM artifact_files WHERE version IS NULL AND created < ?)`, stale); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM artifact_files WHERE version IS NULL AND created < ?", stale)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: creating the artifact tables: %w", err)
	}
	return &Artifacts{s: s}, nil
}

// Save implements [artifact.Store].
func (a *Artifacts) Save(ctx context.Context, key artifact.Key, r io.Reader, opts artifact.SaveOptions) (artifact.Info, error) {
	return artifactrows.Save(key, r, opts, MaxArtifactSize, "sqlitestore", func(in *artifact.Incoming) (artifact.Info, error) {
		return a.save(ctx, key, in, opts)
	})
}

func (a *Artifacts) save(ctx context.Context, key artifact.Key, in *artifact.Incoming, opts artifact.SaveOptions) (info artifact.Info, err error) {
	var id int64
	err = a.s.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO artifact_files (owner, thread, name, content_type, size, sha256, chunk, created)
		VALUES (?, ?, ?, ?, 0, '', ?, ?) RETURNING id`, key.User, key.Thread, key.Name, in.ContentType(), ArtifactChunk, time.Now().UnixNano()).Scan(&id)
	})
	if err != nil {
		return info, err
	}
	committed := false
	defer artifactrows.Undo(ctx, &committed, func(ctx context.Context) error {
		return a.s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM artifact_chunks WHERE file = ?", id)
			if err == nil {
				_, err = tx.ExecContext(ctx, "DELETE FROM artifact_files WHERE id = ?", id)
			}
			return err
		})
	})
	if err := a.writeChunks(ctx, id, in); err != nil {
		return info, err
	}
	info = in.Info(key, 0, time.Now())
	err = a.s.write(ctx, func(tx *sql.Tx) error {
		if opts.MaxBytesPerUser > 0 {
			var used int64
			if err := tx.QueryRowContext(ctx, "SELECT coalesce(sum(size), 0) FROM artifact_files WHERE owner = ? AND version IS NOT NULL",
				key.User).Scan(&used); err != nil {
				return err
			}
			if used+info.Size > opts.MaxBytesPerUser {
				return artifact.QuotaError(used, info.Size, opts.MaxBytesPerUser)
			}
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO artifact_names (owner, thread, name, last) VALUES (?, ?, ?, 1)
			ON CONFLICT (owner, thread, name) DO UPDATE SET last = last + 1 RETURNING last`, key.User, key.Thread, key.Name).Scan(&info.Version)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE artifact_files SET version = ?, size = ?, sha256 = ?, created = ? WHERE id = ?",
			info.Version, info.Size, info.SHA256, info.Created.UnixNano(), id)
		return err
	})
	if err != nil {
		return artifact.Info{}, err
	}
	committed = true
	return info, nil
}

// chunksPerTx is how many chunks of a file one transaction writes.
const chunksPerTx = 16

// writeChunks writes in's bytes as the chunks of file id, a transaction
// per chunksPerTx chunks.
func (a *Artifacts) writeChunks(ctx context.Context, id int64, in io.Reader) error {
	var batch [][]byte
	flush := func(first int) error {
		if len(batch) == 0 {
			return nil
		}
		err := a.s.write(ctx, func(tx *sql.Tx) error {
			for i, data := range batch {
				if _, err := tx.ExecContext(ctx, "INSERT INTO artifact_chunks (file, seq, data) VALUES (?, ?, ?)", id, first+i, data); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	next := 0
	err := artifactrows.Split(in, ArtifactChunk, func(seq int, data []byte) error {
		batch = append(batch, append([]byte(nil), data...))
		if len(batch) < chunksPerTx {
			return nil
		}
		err := flush(next)
		next = seq + 1
		return err
	})
	if err == nil {
		err = flush(next)
	}
	return err
}

// fileColumns are the columns of artifact_files a version is read from.
const fileColumns = "id, name, version, content_type, size, sha256, chunk, created"

// scanFile reads a row of fileColumns.
func scanFile(row interface{ Scan(...any) error }, key artifact.Key) (id, chunk int64, info artifact.Info, err error) {
	var created int64
	err = row.Scan(&id, &key.Name, &info.Version, &info.ContentType, &info.Size, &info.SHA256, &chunk, &created)
	info.Key, info.Created = key, time.Unix(0, created).UTC()
	return id, chunk, info, err
}

// Open implements [artifact.Store].
func (a *Artifacts) Open(ctx context.Context, key artifact.Key, version int) (artifact.File, error) {
	if err := artifactrows.CheckOpen(key, version); err != nil {
		return nil, err
	}
	q := "SELECT " + fileColumns + " FROM artifact_files WHERE owner = ? AND thread = ? AND name = ? AND version = ?"
	args := []any{key.User, key.Thread, key.Name, version}
	if version == 0 {
		q = "SELECT " + fileColumns + " FROM artifact_files WHERE owner = ? AND thread = ? AND name = ? AND version IS NOT NULL ORDER BY version DESC LIMIT 1"
		args = args[:3]
	}
	id, chunk, info, err := scanFile(a.s.db.QueryRowContext(ctx, q, args...), key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, artifactrows.NotFound(key, version)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %q: %w", key.Name, err)
	}
	return artifactrows.NewFile(info, chunk, func(seq int64) ([]byte, error) {
		var data []byte
		err := a.s.db.QueryRowContext(ctx, "SELECT data FROM artifact_chunks WHERE file = ? AND seq = ?", id, seq).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlitestore: reading %q version %d: %w (deleted meanwhile)", key.Name, info.Version, artifact.ErrNotFound)
		}
		return data, err
	}), nil
}

// List implements [artifact.Store].
func (a *Artifacts) List(ctx context.Context, user, thread string) ([]artifact.Info, error) {
	if err := artifact.CheckScope(user, thread); err != nil {
		return nil, err
	}
	return a.infos(ctx, `SELECT `+fileColumns+` FROM artifact_files f WHERE owner = ? AND thread = ? AND version =
		(SELECT max(version) FROM artifact_files g WHERE g.owner = f.owner AND g.thread = f.thread AND g.name = f.name)
		ORDER BY name`, artifact.Key{User: user, Thread: thread}, user, thread)
}

// Versions implements [artifact.Store].
func (a *Artifacts) Versions(ctx context.Context, key artifact.Key) ([]artifact.Info, error) {
	if err := artifact.CheckKey(key); err != nil {
		return nil, err
	}
	out, err := a.infos(ctx, "SELECT "+fileColumns+" FROM artifact_files WHERE owner = ? AND thread = ? AND name = ? AND version IS NOT NULL ORDER BY version",
		key, key.User, key.Thread, key.Name)
	if err == nil && len(out) == 0 {
		err = artifactrows.NotFound(key, 0)
	}
	return out, err
}

func (a *Artifacts) infos(ctx context.Context, q string, key artifact.Key, args ...any) ([]artifact.Info, error) {
	rows, err := a.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: listing artifacts: %w", err)
	}
	defer rows.Close()
	var out []artifact.Info
	for rows.Next() {
		_, _, info, err := scanFile(rows, key)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: listing artifacts: %w", err)
		}
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: listing artifacts: %w", err)
	}
	return out, nil
}

// Delete implements [artifact.Store].
func (a *Artifacts) Delete(ctx context.Context, key artifact.Key, version int) error {
	if err := artifactrows.CheckOpen(key, version); err != nil {
		return err
	}
	where := "owner = ? AND thread = ? AND name = ? AND version IS NOT NULL"
	args := []any{key.User, key.Thread, key.Name}
	if version > 0 {
		where = "owner = ? AND thread = ? AND name = ? AND version = ?"
		args = append(args, version)
	}
	var n int64
	err := a.s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM artifact_chunks WHERE file IN (SELECT id FROM artifact_files WHERE "+where+")", args...); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM artifact_files WHERE "+where, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: deleting %q: %w", key.Name, err)
	}
	if n == 0 {
		return artifactrows.NotFound(key, version)
	}
	return nil
}

// DeleteThread implements [artifact.Store]: the thread's files, their
// bytes and its names, in one transaction.
func (a *Artifacts) DeleteThread(ctx context.Context, user, thread string) error {
	if err := artifact.CheckScope(user, thread); err != nil {
		return err
	}
	err := a.s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			"DELETE FROM artifact_chunks WHERE file IN (SELECT id FROM artifact_files WHERE owner = ? AND thread = ?)",
			"DELETE FROM artifact_files WHERE owner = ? AND thread = ?",
			"DELETE FROM artifact_names WHERE owner = ? AND thread = ?",
		} {
			if _, err := tx.ExecContext(ctx, q, user, thread); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: deleting the thread's artifacts: %w", err)
	}
	return nil
}

// Usage implements [artifact.Store].
func (a *Artifacts) Usage(ctx context.Context, user string) (int64, error) {
	if err := artifact.CheckScope(user, ""); err != nil {
		return 0, err
	}
	var n int64
	if err := a.s.db.QueryRowContext(ctx, "SELECT coalesce(sum(size), 0) FROM artifact_files WHERE owner = ? AND version IS NOT NULL", user).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlitestore: totalling the user's artifacts: %w", err)
	}
	return n, nil
}
