package browsertest

import (
	"bufio"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var readme = flag.Bool("readme", false, "rewrite agentserver/devui/testdata/screenshot.png, the picture of the page in docs/serving.md")

// The serving guide's command, as a user runs it: go run ./examples/chat -web,
// offline, with no key, then the weather question in the page.
func TestExample(t *testing.T) {
	ctx := browser(t)
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "chat")
	if out, err := exec.Command("go", "build", "-C", root, "-o", bin, "./examples/chat").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/chat: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-web", "127.0.0.1:0")
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	urls := make(chan string, 1)
	var output strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`Serving the dev UI at (http://\S+/)`)
		for sc.Scan() {
			output.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the chat did not exit cleanly on an interrupt: %v\n%s", err, output.String())
			}
		case <-time.After(hang):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the chat did not stop on an interrupt")
		}
	}
	defer stop()
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		stopped = true
		t.Fatalf("the chat exited: %v\n%s", err, output.String())
	case <-time.After(hang):
		t.Fatalf("the chat printed no address:\n%s", output.String())
	}

	run(t, ctx, "opening the page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "What is the weather in Paris and Tokyo?")
	until(t, ctx, "the answer", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null && `+lastAnswer+`.querySelector('.end').dataset.timed === '1'`)
	var got struct {
		Text  string
		Cards []string
	}
	eval(t, ctx, `({text: `+lastAnswer+`.querySelector(':scope > .body > .text').textContent,
		cards: [...`+lastAnswer+`.querySelectorAll('.tool')].map(c => c.dataset.name + ' ' + c.dataset.state + ' ' + c.querySelector('.args').textContent)})`, &got)
	if !strings.Contains(got.Text, "Paris: ") || !strings.Contains(got.Text, "Tokyo: ") ||
		strings.Join(got.Cards, "; ") != `get_weather done {"city":"Paris"}; get_weather done {"city":"Tokyo"}` {
		t.Errorf("the offline answer: %+v", got)
	}
	path := shot(t, ctx, "example-chat")
	if *readme {
		png, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "agentserver", "devui", "testdata", "screenshot.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "opening the timeline", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('.timeline-link')`)))
	until(t, ctx, "the timeline", `document.querySelectorAll('#timeline .tl-row[data-kind=tool]').length === 2`)
	shot(t, ctx, "example-timeline")
	// The agent has the chat's name (agent.Config.Name).
	run(t, ctx, "opening the agent", chromedp.Click(chromedp.CSS("#nav-agent")))
	until(t, ctx, "the agent's name", `document.querySelector('#agent-name')?.textContent === 'chat'`)
	stop()
	if !strings.Contains(output.String(), "offline model") {
		t.Errorf("the chat did not say it runs offline:\n%s", output.String())
	}
}

// cleanEnv is the environment without the variables that would make the
// chat talk to Gemini.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI":
		default:
			env = append(env, kv)
		}
	}
	return env
}
