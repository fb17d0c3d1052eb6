// Package processtest races the runs of one conversation across
// processes, for the tests of the durable stores: a test re-executes its
// binary as children that serve [Child] on a store they open themselves,
// and [Race] drives them against the same database.
package processtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// sharedRun is the run that Race begins and the children race to end.
const sharedRun = "shared-run"

// Child serves Race's commands, one a line on in, on the store j, as the
// racer name, and answers each with a line on out, until in ends:
//
//   - "begin ID": BeginRun of a run named name on conversation ID;
//     answers "won NAME" or "lost";
//   - "end ID": EndRun of the run Race began there, with name's two
//     contents; answers "ended NAME" or "lost".
func Child(ctx context.Context, j session.Journaler, name string, in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	for lines.Scan() {
		op, id, _ := strings.Cut(lines.Text(), " ")
		var err error
		var lost error
		switch op {
		case "begin":
			err, lost = j.BeginRun(ctx, id, name, session.Claim{}, [][]byte{[]byte(name)}), session.ErrRunInProgress
		case "end":
			err, lost = j.EndRun(ctx, id, sharedRun, session.Claim{}, contents(name)), session.ErrNoRun
		default:
			return fmt.Errorf("unknown command %q", lines.Text())
		}
		switch {
		case errors.Is(err, lost):
			fmt.Fprintln(w, "lost")
		case err != nil:
			return err
		case op == "begin":
			fmt.Fprintln(w, "won", name)
		default:
			fmt.Fprintln(w, "ended", name)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return lines.Err()
}

// contents are what the racer name saves when its EndRun wins.
func contents(name string) []*genai.Content {
	return []*genai.Content{
		genai.NewContentFromText(name+" asks", genai.RoleUser),
		genai.NewContentFromText(name+" answers", genai.RoleModel),
	}
}

// Race starts children, commands that re-execute the test binary as a
// Child on the database of j, and races them rounds times: each round,
// every child begins a run on one new conversation at once, and exactly
// one must win, whose run the journal then holds; then every child ends
// the run Race began on another, and exactly one must, whose contents the
// conversation then holds, once.
func Race(t *testing.T, j session.Journaler, children []*exec.Cmd, rounds int) {
	t.Helper()
	ctx := context.Background()
	type child struct {
		in   io.WriteCloser
		out  *bufio.Scanner
		wins int
	}
	cs := make([]*child, len(children))
	for i, cmd := range children {
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cs[i] = &child{in: in, out: bufio.NewScanner(out)}
	}
	defer func() {
		for i, c := range cs {
			c.in.Close()
			if err := children[i].Wait(); err != nil {
				t.Errorf("child %d: %v", i, err)
			}
		}
	}()
	// ask sends line to every child, then reads their answers.
	ask := func(line string) []string {
		t.Helper()
		for _, c := range cs {
			if _, err := io.WriteString(c.in, line+"\n"); err != nil {
				t.Fatalf("asking a child to %s: %v", line, err)
			}
		}
		answers := make([]string, len(cs))
		for i, c := range cs {
			if !c.out.Scan() {
				t.Fatalf("child %d ended instead of answering %q: %v", i, line, c.out.Err())
			}
			answers[i] = c.out.Text()
		}
		return answers
	}
	for r := range rounds {
		id := fmt.Sprint("race-", r)
		winner, name := -1, ""
		for i, a := range ask("begin " + id) {
			if n, ok := strings.CutPrefix(a, "won "); ok {
				if winner >= 0 {
					t.Fatalf("round %d: children %d and %d both began a run on one conversation", r, winner, i)
				}
				winner, name = i, n
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no child began the run", r)
		}
		cs[winner].wins++
		if got, err := j.LoadRun(ctx, id); err != nil || got.Run != name || len(got.Entries) != 1 || string(got.Entries[0]) != name {
			t.Fatalf("round %d: LoadRun = %+v, %v; want the run of %s, which won", r, got, err, name)
		}

		id = fmt.Sprint("end-", r)
		if err := j.BeginRun(ctx, id, sharedRun, session.Claim{}, [][]byte{[]byte("begun")}); err != nil {
			t.Fatal(err)
		}
		ended := -1
		for i, a := range ask("end " + id) {
			if n, ok := strings.CutPrefix(a, "ended "); ok {
				if ended >= 0 {
					t.Fatalf("round %d: children %d and %d both ended one run", r, ended, i)
				}
				ended, name = i, n
			}
		}
		if ended < 0 {
			t.Fatalf("round %d: no child ended the run", r)
		}
		got, err := j.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(contents(name), got); diff != "" {
			t.Fatalf("round %d: the conversation differs from what %s saved, once (-want +got):\n%s", r, name, diff)
		}
		if _, err := j.LoadRun(ctx, id); !errors.Is(err, session.ErrNoRun) {
			t.Fatalf("round %d: LoadRun after the run ended = %v; want ErrNoRun", r, err)
		}
	}
	for i, c := range cs {
		t.Logf("child %d began %d of %d runs", i, c.wins, rounds)
	}
}
