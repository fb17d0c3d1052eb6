package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
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
// its bytes are being written; toolnexus_artifact_names keeps the
// highest version each name was given, so that a number is never given
// twice.
const artifactSchema = `
CREATE TABLE IF NOT EXISTS toolnexus_artifact_names (
	owner  text COLLATE "C" NOT NULL,
	thread text COLLATE "C" NOT NULL,
	name   text COLLATE "C" NOT NULL,
	last   integer NOT NULL, -- the highest version given
	PRIMARY KEY (owner, thread, name)
);
CREATE TABLE IF NOT EXISTS toolnexus_artifact_files (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	owner        text COLLATE "C" NOT NULL,
	thread       text COLLATE "C" NOT NULL,
	name         text COLLATE "C" NOT NULL,
	version      integer,          -- NULL while the bytes are written
	content_type text NOT NULL,
	size         bigint NOT NULL,
	sha256       text NOT NULL,
	chunk        integer NOT NULL, -- the size of its chunks
	created      timestamptz NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS toolnexus_artifact_files_by_name ON toolnexus_artifact_files (owner, thread, name, version);
CREATE TABLE IF NOT EXISTS toolnexus_artifact_chunks (
	file bigint NOT NULL,
	seq  integer NOT NULL, -- from 0, in order
	data bytea NOT NULL,
	PRIMARY KEY (file, seq)
);`

// artifactLock is the key of the advisory lock under which the artifact
// tables are created: "artifact" in ASCII.
const artifactLock int64 = 0x6172746966616374

// stagedLifetime is how long the bytes of a save that never finished (its
// process died) are kept before Artifacts deletes them.
const stagedLifetime = 24 * time.Hour

// Artifacts is an [artifact.Store] in the Store's database: versioned
// files beside the conversations, surviving restarts as they do. Get it
// with [Store.Artifacts]; it is safe for concurrent use, by goroutines
// and processes.
//
// A save writes the file's bytes first, in rows of ArtifactChunk bytes
// (a transaction per 4 MiB), under a version that is not yet one; then
// one short transaction takes an advisory lock of the user (so that
// concurrent saves of one user are judged against the quota one after
// the other), checks the quota, takes the next version number of the
// name (a row lock on the name's counter) and gives it to the file. A
// reader sees a version once that transaction committed: whole. Files
// are at most MaxArtifactSize.
type Artifacts struct {
	s *Store
}

var _ artifact.Store = (*Artifacts)(nil)

// Artifacts returns the store's artifact store, creating its tables when
// they do not exist, and deleting what saves that never finished left
// behind.
func (s *Store) Artifacts(ctx context.Context) (*Artifacts, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", artifactLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, artifactSchema); err != nil {
			return err
		}
		stale := time.Now().Add(-stagedLifetime)
		if _, err := tx.Exec(ctx, `DELETE FROM toolnexus_artifact_chunks WHERE file IN
			(SELECT id FROM toolnexus_artifact_files WHERE version IS NULL AND created < $1)`, stale); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM toolnexus_artifact_files WHERE version IS NULL AND created < $1", stale)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: creating the artifact tables: %w", err)
	}
	return &Artifacts{s: s}, nil
}

// Save implements [artifact.Store].
func (a *Artifacts) Save(ctx context.Context, key artifact.Key, r io.Reader, opts artifact.SaveOptions) (artifact.Info, error) {
	return artifactrows.Save(key, r, opts, MaxArtifactSize, "pgstore", func(in *artifact.Incoming) (artifact.Info, error) {
		return a.save(ctx, key, in, opts)
	})
}

func (a *Artifacts) save(ctx context.Context, key artifact.Key, in *artifact.Incoming, opts artifact.SaveOptions) (info artifact.Info, err error) {
	var id int64
	err = a.s.pool.QueryRow(ctx, `INSERT INTO toolnexus_artifact_files (owner, thread, name, content_type, size, sha256, chunk, created)
		VALUES ($1, $2, $3, $4, 0, '', $5, now()) RETURNING id`, key.User, key.Thread, key.Name, in.ContentType(), ArtifactChunk).Scan(&id)
	if err != nil {
		return info, err
	}
	committed := false
	defer artifactrows.Undo(ctx, &committed, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, a.s.pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM toolnexus_artifact_chunks WHERE file = $1", id)
			if err == nil {
				_, err = tx.Exec(ctx, "DELETE FROM toolnexus_artifact_files WHERE id = $1", id)
			}
			return err
		})
	})
	if err := a.writeChunks(ctx, id, in); err != nil {
		return info, err
	}
	info = in.Info(key, 0, time.Now())
	err = pgx.BeginFunc(ctx, a.s.pool, func(tx pgx.Tx) error {
		if opts.MaxBytesPerUser > 0 {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('toolnexus_artifacts ' || $1, 0))", key.User); err != nil {
				return err
			}
			var used int64
			if err := tx.QueryRow(ctx, "SELECT coalesce(sum(size), 0) FROM toolnexus_artifact_files WHERE owner = $1 AND version IS NOT NULL",
				key.User).Scan(&used); err != nil {
				return err
			}
			if used+info.Size > opts.MaxBytesPerUser {
				return artifact.QuotaError(used, info.Size, opts.MaxBytesPerUser)
			}
		}
		err := tx.QueryRow(ctx, `INSERT INTO toolnexus_artifact_names AS n (owner, thread, name, last) VALUES ($1, $2, $3, 1)
			ON CONFLICT (owner, thread, name) DO UPDATE SET last = n.last + 1 RETURNING last`, key.User, key.Thread, key.Name).Scan(&info.Version)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE toolnexus_artifact_files SET version = $1, size = $2, sha256 = $3, created = $4 WHERE id = $5",
			info.Version, info.Size, info.SHA256, info.Created, id)
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
	var batch pgx.Batch
	flush := func() error {
		if batch.Len() == 0 {
			return nil
		}
		err := pgx.BeginFunc(ctx, a.s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, &batch).Close() })
		batch = pgx.Batch{}
		return err
	}
	err := artifactrows.Split(in, ArtifactChunk, func(seq int, data []byte) error {
		batch.Queue("INSERT INTO toolnexus_artifact_chunks (file, seq, data) VALUES ($1, $2, $3)", id, seq, append([]byte(nil), data...))
		if batch.Len() < chunksPerTx {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	return err
}

// fileColumns are the columns of toolnexus_artifact_files a version is
// read from.
const fileColumns = "id, name, version, content_type, size, sha256, chunk, created"

// scanFile reads a row of fileColumns.
func scanFile(row pgx.Row, key artifact.Key) (id int64, chunk int32, info artifact.Info, err error) {
	var version int32
	err = row.Scan(&id, &key.Name, &version, &info.ContentType, &info.Size, &info.SHA256, &chunk, &info.Created)
	info.Key, info.Version, info.Created = key, int(version), info.Created.UTC()
	return id, chunk, info, err
}

// Open implements [artifact.Store].
func (a *Artifacts) Open(ctx context.Context, key artifact.Key, version int) (artifact.File, error) {
	if err := artifactrows.CheckOpen(key, version); err != nil {
		return nil, err
	}
	q := "SELECT " + fileColumns + " FROM toolnexus_artifact_files WHERE owner = $1 AND thread = $2 AND name = $3 AND version = $4"
	args := []any{key.User, key.Thread, key.Name, version}
	if version == 0 {
		q = "SELECT " + fileColumns + " FROM toolnexus_artifact_files WHERE owner = $1 AND thread = $2 AND name = $3 AND version IS NOT NULL ORDER BY version DESC LIMIT 1"
		args = args[:3]
	}
	var (
		id    int64
		chunk int32
		info  artifact.Info
	)
	err := retry(ctx, func() (bool, error) {
		var err error
		id, chunk, info, err = scanFile(a.s.pool.QueryRow(ctx, q, args...), key)
		return true, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, artifactrows.NotFound(key, version)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening %q: %w", key.Name, err)
	}
	return artifactrows.NewFile(info, int64(chunk), func(seq int64) ([]byte, error) {
		var data []byte
		err := retry(ctx, func() (bool, error) {
			return true, a.s.pool.QueryRow(ctx, "SELECT data FROM toolnexus_artifact_chunks WHERE file = $1 AND seq = $2", id, seq).Scan(&data)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("pgstore: reading %q version %d: %w (deleted meanwhile)", key.Name, info.Version, artifact.ErrNotFound)
		}
		return data, err
	}), nil
}

// List implements [artifact.Store].
func (a *Artifacts) List(ctx context.Context, user, thread string) ([]artifact.Info, error) {
	if err := artifact.CheckScope(user, thread); err != nil {
		return nil, err
	}
	return a.infos(ctx, `SELECT DISTINCT ON (name) `+fileColumns+` FROM toolnexus_artifact_files
		WHERE owner = $1 AND thread = $2 AND version IS NOT NULL ORDER BY name, version DESC`, artifact.Key{User: user, Thread: thread}, user, thread)
}

// Versions implements [artifact.Store].
func (a *Artifacts) Versions(ctx context.Context, key artifact.Key) ([]artifact.Info, error) {
	if err := artifact.CheckKey(key); err != nil {
		return nil, err
	}
	out, err := a.infos(ctx, "SELECT "+fileColumns+" FROM toolnexus_artifact_files WHERE owner = $1 AND thread = $2 AND name = $3 AND version IS NOT NULL ORDER BY version",
		key, key.User, key.Thread, key.Name)
	if err == nil && len(out) == 0 {
		err = artifactrows.NotFound(key, 0)
	}
	return out, err
}

func (a *Artifacts) infos(ctx context.Context, q string, key artifact.Key, args ...any) ([]artifact.Info, error) {
	var out []artifact.Info
	err := retry(ctx, func() (bool, error) {
		out = nil
		rows, err := a.s.pool.Query(ctx, q, args...)
		if err != nil {
			return true, err
		}
		defer rows.Close()
		for rows.Next() {
			_, _, info, err := scanFile(rows, key)
			if err != nil {
				return true, err
			}
			out = append(out, info)
		}
		return true, rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing artifacts: %w", err)
	}
	return out, nil
}

// Delete implements [artifact.Store].
func (a *Artifacts) Delete(ctx context.Context, key artifact.Key, version int) error {
	if err := artifactrows.CheckOpen(key, version); err != nil {
		return err
	}
	where := "owner = $1 AND thread = $2 AND name = $3 AND version IS NOT NULL"
	args := []any{key.User, key.Thread, key.Name}
	if version > 0 {
		where = "owner = $1 AND thread = $2 AND name = $3 AND version = $4"
		args = append(args, version)
	}
	var n int64
	err := pgx.BeginFunc(ctx, a.s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "DELETE FROM toolnexus_artifact_files WHERE "+where+" RETURNING id", args...)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		n = int64(len(ids))
		_, err = tx.Exec(ctx, "DELETE FROM toolnexus_artifact_chunks WHERE file = ANY($1)", ids)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: deleting %q: %w", key.Name, err)
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
	err := pgx.BeginFunc(ctx, a.s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			"DELETE FROM toolnexus_artifact_chunks WHERE file IN (SELECT id FROM toolnexus_artifact_files WHERE owner = $1 AND thread = $2)",
			"DELETE FROM toolnexus_artifact_files WHERE owner = $1 AND thread = $2",
			"DELETE FROM toolnexus_artifact_names WHERE owner = $1 AND thread = $2",
		} {
			if _, err := tx.Exec(ctx, q, user, thread); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: deleting the thread's artifacts: %w", err)
	}
	return nil
}

// Usage implements [artifact.Store].
func (a *Artifacts) Usage(ctx context.Context, user string) (int64, error) {
	if err := artifact.CheckScope(user, ""); err != nil {
		return 0, err
	}
	var n int64
	err := retry(ctx, func() (bool, error) {
		return true, a.s.pool.QueryRow(ctx, "SELECT coalesce(sum(size), 0) FROM toolnexus_artifact_files WHERE owner = $1 AND version IS NOT NULL", user).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("pgstore: totalling the user's artifacts: %w", err)
	}
	return n, nil
}
