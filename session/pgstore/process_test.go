package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session/internal/processtest"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

// The test binary runs as a child process when childEnv is set: the tests
// re-execute it to have real processes share a database.
const (
	childEnv   = "PGSTORE_TEST_CHILD" // "append" or "journal"
	urlEnv     = "PGSTORE_TEST_URL"
	writerEnv  = "PGSTORE_TEST_WRITER"
	batchesEnv = "PGSTORE_TEST_BATCHES"
	batchSize  = 3
)

// batch returns contents whose texts are "writer/batch/index", as
// sessiontest.CheckBatches reads them.
func batch(writer, b int) []*genai.Content {
	out := make([]*genai.Content, batchSize)
	for i := range out {
		out[i] = genai.NewContentFromText(fmt.Sprintf("%d/%d/%d", writer, b, i), genai.RoleUser)
	}
	return out
}

func runChild(mode string) error {
	if mode != "append" && mode != "journal" {
		return fmt.Errorf("unknown mode %q", mode)
	}
	ctx := context.Background()
	writer, _ := strconv.Atoi(os.Getenv(writerEnv))
	batches, _ := strconv.Atoi(os.Getenv(batchesEnv))
	s, err := pgstore.Open(ctx, os.Getenv(urlEnv))
	if err != nil {
		return err
	}
	defer s.Close()
	if mode == "journal" {
		return processtest.Child(ctx, s, fmt.Sprint("child-", writer), os.Stdin, os.Stdout)
	}
	for b := range batches {
		if err := s.Append(ctx, "shared", batch(writer, b)); err != nil {
			return err
		}
	}
	return nil
}

// child returns the test binary re-executed as a child in mode, on the
// database at u.
func child(t *testing.T, mode, u string, writer, batches int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, urlEnv+"="+u,
		writerEnv+"="+strconv.Itoa(writer), batchesEnv+"="+strconv.Itoa(batches))
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes and this one, each opening the new database itself,
// append to one conversation at the same time: every batch is there,
// whole, each writer's in order, and the conversation's Len and Bytes
// count them all.
func TestProcessesAppendConcurrently(t *testing.T) {
	const batches = 60
	u := pgtest.Database(t)
	var children []*exec.Cmd
	for w := 1; w <= 2; w++ {
		cmd := child(t, "append", u, w, batches)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, cmd)
	}
	s := open(t, u)
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range batches {
			if err := s.Append(ctx, "shared", batch(0, b)); err != nil {
				t.Errorf("Append = %v", err)
				return
			}
		}
	})
	for i, cmd := range children {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v", i+1, err)
		}
	}
	wg.Wait()
	got, err := s.Load(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.CheckBatches(t, got, 3, batches, batchSize)
	infos, err := s.List(ctx)
	if err != nil || len(infos) != 1 || infos[0].Len != 3*batches*batchSize || infos[0].Bytes != size(t, got...) {
		t.Errorf("List() = %+v, %v; want one conversation of %d contents, %d bytes", infos, err, 3*batches*batchSize, size(t, got...))
	}
}

// Two processes, each opening the database itself, race runs on it: of
// two BeginRuns on one conversation, exactly one wins; of two EndRuns of
// one run, exactly one saves it, once.
func TestProcessesRaceRuns(t *testing.T) {
	u := pgtest.Database(t)
	s := open(t, u)
	processtest.Race(t, s, []*exec.Cmd{child(t, "journal", u, 1, 0), child(t, "journal", u, 2, 0)}, 25)
}
