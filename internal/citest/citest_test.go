package citest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Heavy skips unless TOOLNEXUS_CI=1, saying how to run the test; -short
// skips it either way. The cases run this test binary again, each with
// its environment.
func TestHeavy(t *testing.T) {
	if os.Getenv("CITEST_CHILD") == "1" {
		Heavy(t, "does something heavy")
		t.Log("ran")
		return
	}
	for _, c := range []struct {
		env, flag, want string
	}{
		{"", "", "left to CI: does something heavy; TOOLNEXUS_CI=1 runs it"},
		{"TOOLNEXUS_CI=0", "", "left to CI"},
		{"TOOLNEXUS_CI=1", "", "ran"},
		{"TOOLNEXUS_CI=1", "-test.short", "left to CI"},
	} {
		args := []string{"-test.run=^TestHeavy$", "-test.v"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "CITEST_CHILD=1", "TOOLNEXUS_CI=")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %s: %v\n%s\nwant %q", c.env, c.flag, err, out, c.want)
		}
	}
}
