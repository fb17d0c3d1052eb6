package sqlitestore_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/session/internal/processtest"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// genai's dependencies start an OpenCensus worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// The test binary runs as a child process when childEnv is set: the tests
// re-execute it to have real processes share a file.
const (
	childEnv   = "SQLITESTORE_TEST_CHILD" // "append", "until-killed" or "journal"
	pathEnv    = "SQLITESTORE_TEST_PATH"
	writerEnv  = "SQLITESTORE_TEST_WRITER"
	batchesEnv = "SQLITESTORE_TEST_BATCHES"
)

// Batches of contents whose texts are "writer/batch/index", as
// sessiontest.CheckBatches reads them; pad makes each content large.
func batch(writer, b, size, pad int) []*genai.Content {
	out := make([]*genai.Content, size)
	for i := range out {
		out[i] = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: fmt.Sprintf("%d/%d/%d", writer, b, i)}}}
		if pad > 0 {
			out[i].Parts = append(out[i].Parts, &genai.Part{Text: strings.Repeat("x", pad)})
		}
	}
	return out
}

const (
	batchSize = 3
	crashSize = 5       // contents per append in the crash test
	crashPad  = 1 << 15 // bytes per content: each append writes 160 KiB
)

func runChild(mode string) error {
	ctx := context.Background()
	path := os.Getenv(pathEnv)
	writer, _ := strconv.Atoi(os.Getenv(writerEnv))
	batches, _ := strconv.Atoi(os.Getenv(batchesEnv))
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	switch mode {
	case "append":
		for b := range batches {
			if err := s.Append(ctx, "shared", batch(writer, b, batchSize, 0)); err != nil {
				return err
			}
		}
		return nil
	case "until-killed":
		// Appends numbered batches, one for each line the parent writes,
		// saying when each begins and when it is done, until the parent
		// kills the process: it never begins an append the parent did not
		// ask for, so the parent knows what a kill can interrupt.
		start := 0
		if got, err := s.Load(ctx, "crash"); err == nil {
			start = len(got) / crashSize
		}
		in := bufio.NewScanner(os.Stdin)
		out := bufio.NewWriter(os.Stdout)
		for b := start; in.Scan(); b++ {
			fmt.Fprintf(out, "begin %d\n", b)
			out.Flush()
			if err := s.Append(ctx, "crash", batch(0, b, crashSize, crashPad)); err != nil {
				return err
			}
			fmt.Fprintf(out, "done %d\n", b)
			out.Flush()
		}
		return in.Err()
	case "journal":
		return processtest.Child(ctx, s, fmt.Sprint("child-", writer), os.Stdin, os.Stdout)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// command returns the test binary re-executed as a child in mode.
func command(t *testing.T, mode, path string, writer, batches int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, pathEnv+"="+path,
		writerEnv+"="+strconv.Itoa(writer), batchesEnv+"="+strconv.Itoa(batches))
	cmd.Stderr = os.Stderr
	return cmd
}

// Two processes and this one append to one conversation of a new file at
// the same time: every batch is there, whole, each writer's in order.
func TestProcessesAppendConcurrently(t *testing.T) {
	const batches = 40
	path := filepath.Join(t.TempDir(), "shared.db")
	var children []*exec.Cmd
	for w := 1; w <= 2; w++ {
		cmd := command(t, "append", path, w, batches)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, cmd)
	}
	s := open(t, path)
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range batches {
			if err := s.Append(ctx, "shared", batch(0, b, batchSize, 0)); err != nil {
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
	if infos, _ := s.List(ctx); len(infos) != 1 || infos[0].Len != 3*batches*batchSize {
		t.Errorf("List() = %+v; want one conversation of %d contents", infos, 3*batches*batchSize)
	}
}

// A process killed (SIGKILL) while it appends leaves a file that opens,
// passes SQLite's integrity check, and holds every append that returned
// and, of the one in progress, all of it or nothing.
//
// The child appends one batch each time the test asks; the test kills it
// once an append it asked for has begun, a random moment later: the kill
// finds that append in progress or done, never a later one.
func TestKilledMidAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	rounds, midAppend := 5, 0
	for round := range rounds {
		cmd := command(t, "until-killed", path, 0, 0)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: "+format, append([]any{round}, args...)...)
		}
		// A few appends in, kill it during the next one.
		lines := bufio.NewScanner(stdout)
		next := func() string {
			if !lines.Scan() {
				fail("the child ended before it was killed: %v", lines.Err())
			}
			return lines.Text()
		}
		inProgress := -1
		for appends, killAt := 0, 1+rand.IntN(3); ; appends++ {
			if _, err := io.WriteString(stdin, "append\n"); err != nil {
				fail("asking for an append: %v", err)
			}
			line := next()
			n, ok := strings.CutPrefix(line, "begin ")
			if !ok {
				fail("the child said %q; want the beginning of an append", line)
			}
			b, _ := strconv.Atoi(n)
			if appends == killAt {
				inProgress = b
				break
			}
			if line := next(); line != "done "+n {
				fail("the child said %q; want %q", line, "done "+n)
			}
		}
		// The delay only varies the point of the append that the kill
		// interrupts: whatever it is, the child can have done nothing more.
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		checkIntegrity(t, path)
		s, err := sqlitestore.Open(ctx, path)
		if err != nil {
			t.Fatalf("round %d: Open after the kill = %v", round, err)
		}
		got, err := s.Load(ctx, "crash")
		s.Close()
		if err != nil {
			t.Fatalf("round %d: Load after the kill = %v", round, err)
		}
		// Every append that returned is there; of the one in progress,
		// all of it or nothing; and each batch is whole.
		n := len(got) / crashSize
		if len(got)%crashSize != 0 || n < inProgress || n > inProgress+1 {
			t.Fatalf("round %d: %d contents after a kill during append %d; want %d or %d",
				round, len(got), inProgress, inProgress*crashSize, (inProgress+1)*crashSize)
		}
		sessiontest.CheckBatches(t, got, 1, n, crashSize)
		for i, c := range got {
			if len(c.Parts) != 2 || len(c.Parts[1].Text) != crashPad {
				t.Fatalf("round %d: content %d is cut short", round, i)
			}
		}
		if n == inProgress {
			midAppend++
		}
	}
	t.Logf("%d kills; %d of them cut an append short, which left no trace", rounds, midAppend)
}

// checkIntegrity runs SQLite's integrity check on the file at path.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var result string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&result); err != nil || result != "ok" {
		t.Fatalf("integrity_check = %q, %v; want ok", result, err)
	}
}

// Two processes race runs on one file: of two BeginRuns on one
// conversation, exactly one wins; of two EndRuns of one run, exactly one
// saves it, once.
func TestProcessesRaceRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s := open(t, path)
	processtest.Race(t, s, []*exec.Cmd{command(t, "journal", path, 1, 0), command(t, "journal", path, 2, 0)}, 25)
}
