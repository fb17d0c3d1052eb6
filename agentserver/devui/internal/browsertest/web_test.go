package browsertest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// webApp builds examples/web with its own Vite and Node 22 (from its
// node_modules: npm ci there) into a temporary folder, serves the bundle
// on loopback, starts examples/server built from the repository with
// -approve and -cors naming the bundle's origin (so that every call of the
// page is a cross-origin one, as from a Vite dev server), and returns the
// page's address with ?api= naming the server. Without npm ci in
// examples/web the test skips, and fails instead when
// TOOLNEXUS_JS_REQUIRED=1 (CI).
func webApp(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(root, "examples", "web")
	node := filepath.Join(web, "node_modules", "node", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("TOOLNEXUS_JS_REQUIRED") == "1" {
			t.Fatalf("no %s, and TOOLNEXUS_JS_REQUIRED=1: run npm ci in examples/web", node)
		}
		t.Skip("examples/web is not installed (cd examples/web && npm ci); set TOOLNEXUS_JS_REQUIRED=1 to fail instead")
	}
	dist := t.TempDir()
	build := exec.Command(node, filepath.Join("node_modules", "vite", "bin", "vite.js"), "build", "--outDir", dist, "--emptyOutDir", "--logLevel", "warn")
	build.Dir = web
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("vite build: %v\n%s", err, out)
	}
	page := httptest.NewServer(http.FileServer(http.Dir(dist)))
	t.Cleanup(page.Close)

	return page.URL + "/?api=" + exampleServer(t, root, "-approve", "-cors", page.URL)
}

// exampleServer builds examples/server from the repository at root,
// starts it on a free loopback port with args, stops it (checking that it
// exits cleanly on an interrupt) when the test ends, and returns its URL.
func exampleServer(t *testing.T, root string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-C", root, "-o", bin, "./examples/server").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cleanEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	urls := make(chan string, 1)
	var output strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg=serving url=(http://\S+)`)
		for sc.Scan() {
			output.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the server did not exit cleanly on an interrupt: %v\n%s", err, output.String())
			}
		case <-time.After(hang):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the server did not stop on an interrupt")
		}
	})
	select {
	case api := <-urls:
		return api
	case err := <-exited:
		t.Fatalf("the server exited: %v\n%s", err, output.String())
	case <-time.After(hang):
		t.Fatalf("the server printed no address:\n%s", output.String())
	}
	return ""
}

// say types a message in the app's box and sends it.
func say(t *testing.T, ctx context.Context, msg string) {
	t.Helper()
	until(t, ctx, "the Send button", `document.querySelector('button.send') != null`)
	run(t, ctx, "sending "+msg,
		chromedp.SendKeys(chromedp.CSS(`input[name=message]`), msg),
		chromedp.Click(chromedp.CSS(`button.send`)))
}

// tool is the page's card of the call of that name with that argument.
func tool(name, arg string) string {
	return `[...document.querySelectorAll('.tool[data-name=` + name + `]')].findLast(c => c.querySelector('code').textContent.includes(` + "'" + arg + "'" + `))`
}

// The React app of examples/web on useChat, built with its lockfile's
// Vite and served from another origin than examples/server: the
// two-city weather question with approvals, one approved and one denied,
// and the answer; a long count_primes run that shows its progress,
// survives a reload (the history loads, the run resumes) and stops with
// the Stop button; then the next message is answered.
func TestWebAISDK(t *testing.T) {
	ctx := browser(t)
	url := webApp(t) + "&chat=web-aisdk"
	run(t, ctx, "opening the app", chromedp.Navigate(url))
	say(t, ctx, "What's the weather in Paris and Tokyo?")
	paris, tokyo := tool("get_weather", "Paris"), tool("get_weather", "Tokyo")
	until(t, ctx, "two calls waiting for approval", paris+`?.dataset.state === 'approval-requested' && `+tokyo+`?.dataset.state === 'approval-requested'`)
	shot(t, ctx, "web-approvals")
	run(t, ctx, "approving Paris", chromedp.Click(chromedp.JSPath(paris+`.querySelector('button.approve')`)))
	run(t, ctx, "denying Tokyo", chromedp.Click(chromedp.JSPath(tokyo+`.querySelector('button.deny')`)))
	lastText := `([...document.querySelectorAll('.message.assistant .text')].at(-1)?.textContent ?? '')`
	until(t, ctx, "the answer", paris+`.dataset.state === 'output-available' && `+tokyo+`.dataset.state === 'output-denied' && `+lastText+`.includes('Paris: ') && document.querySelector('button.send') != null`)
	shot(t, ctx, "web-answer")

	// A long run: its progress shows; a reload loads the history and
	// resumes the run, progress included.
	say(t, ctx, "How many primes are there below 2 billion?")
	primes := tool("count_primes", "2000000000")
	until(t, ctx, "count_primes' progress", primes+`?.dataset.state === 'input-available' && `+primes+`.querySelector('.progress') != null`)
	run(t, ctx, "reloading the page", chromedp.Reload())
	// The stored history has the first turn (the denial marked denied)
	// and the question of the run in progress, the resumed stream its
	// answer so far.
	until(t, ctx, "the history and the resumed run after the reload",
		`document.querySelector('.message.user')?.textContent.includes('Paris and Tokyo') && `+lastQuestion+`.includes('primes are there below 2 billion') && `+paris+`?.dataset.state === 'output-available' && `+
			tokyo+`?.dataset.state === 'output-denied' && `+tokyo+`.textContent.includes('denied') && `+
			primes+`?.querySelector('.progress') != null && document.querySelector('button.stop') != null`)
	shot(t, ctx, "web-reloaded")
	run(t, ctx, "stopping the run", chromedp.Click(chromedp.CSS(`button.stop`)))
	until(t, ctx, "the stopped call", primes+`.dataset.state === 'output-error' && document.querySelector('button.send') != null`)

	// The next message is taken at once.
	say(t, ctx, "what is (12+7)*3")
	until(t, ctx, "the next answer", lastText+`.includes('57')`)
	shot(t, ctx, "web-after-stop")
}

// lastQuestion is a JavaScript expression: the text of the page's last
// user message.
const lastQuestion = `([...document.querySelectorAll('.message.user')].at(-1)?.textContent ?? '')`

// The app's AG-UI page (#agui, on @ag-ui/client's HttpAgent) against the
// same server: the two-city question, one call approved and one denied
// through the interrupts' resume, and the answer; a long count_primes run
// with its progress, a reload that loads the thread and reconnects to the
// run, the Stop button; then the next message.
func TestWebAGUI(t *testing.T) {
	ctx := browser(t)
	url := webApp(t) + "&chat=web-agui#agui"
	run(t, ctx, "opening the app", chromedp.Navigate(url))
	say(t, ctx, "What's the weather in Paris and Tokyo?")
	paris, tokyo := tool("get_weather", "Paris"), tool("get_weather", "Tokyo")
	until(t, ctx, "two calls waiting for approval", paris+`?.dataset.state === 'approval-requested' && `+tokyo+`?.dataset.state === 'approval-requested'`)
	run(t, ctx, "approving Paris", chromedp.Click(chromedp.JSPath(paris+`.querySelector('button.approve')`)))
	run(t, ctx, "denying Tokyo", chromedp.Click(chromedp.JSPath(tokyo+`.querySelector('button.deny')`)))
	lastText := `([...document.querySelectorAll('.message.assistant .text')].at(-1)?.textContent ?? '')`
	until(t, ctx, "the answer", paris+`.dataset.state === 'output-available' && `+tokyo+`.dataset.state === 'output-denied' && `+
		lastText+`.includes('Paris: ') && document.querySelector('button.send') != null`)
	shot(t, ctx, "web-agui-answer")

	say(t, ctx, "How many primes are there below 2 billion?")
	primes := tool("count_primes", "2000000000")
	until(t, ctx, "count_primes' progress", primes+`?.dataset.state === 'input-available' && `+primes+`.querySelector('.progress') != null`)
	run(t, ctx, "reloading the page", chromedp.Reload())
	until(t, ctx, "the history and the reconnected run after the reload",
		`document.querySelector('.message.user')?.textContent.includes('Paris and Tokyo') && `+lastQuestion+`.includes('primes are there below 2 billion') && `+paris+`?.dataset.state === 'output-available' && `+
			tokyo+`?.dataset.state === 'output-denied' && `+primes+`?.querySelector('.progress') != null && document.querySelector('button.stop') != null`)
	shot(t, ctx, "web-agui-reloaded")
	run(t, ctx, "stopping the run", chromedp.Click(chromedp.CSS(`button.stop`)))
	until(t, ctx, "the stopped call", primes+`.dataset.state === 'output-error' && document.querySelector('button.send') != null`)

	say(t, ctx, "what is (12+7)*3")
	until(t, ctx, "the next answer", lastText+`.includes('57')`)
	shot(t, ctx, "web-agui-after-stop")
}

// The app shows a generated file with a download link, on both pages:
// the offline demo agent's weather_chart makes a chart and a CSV, which
// the server keeps as files of the thread; the page previews the chart
// and links both, the links download them (cross-origin, as the page's
// other calls), and a reload shows them again from the stored history.
func TestWebFiles(t *testing.T) {
	ctx := browser(t)
	base := webApp(t)
	for _, page := range []struct{ name, url string }{{"aisdk", base + "&chat=web-files"}, {"agui", base + "&chat=web-files-agui#agui"}} {
		t.Run(page.name, func(t *testing.T) {
			run(t, ctx, "opening the app", chromedp.Navigate(page.url))
			say(t, ctx, "Chart the temperatures in Paris, Oslo and Tokyo")
			chart := `document.querySelector('.file[data-name="weather-chart.png"]')`
			shown := chart + `?.querySelector('img')?.naturalWidth === 480 && document.querySelector('.file[data-name="weather-chart.csv"] a[download]') != null`
			until(t, ctx, "the chart and its data, with download links", shown)
			shot(t, ctx, "web-files-"+page.name)
			var got struct {
				PNG  bool
				CSV  string
				Name string
			}
			run(t, ctx, "downloading them", chromedp.Evaluate[struct{}](`(async () => {
				const png = new Uint8Array(await (await fetch(`+chart+`.querySelector('a[download]').href)).arrayBuffer());
				const csv = await (await fetch(document.querySelector('.file[data-name="weather-chart.csv"] a[download]').href)).text();
				window.downloaded = { png: png[0] === 0x89 && png[1] === 0x50, csv, name: `+chart+`.querySelector('a[download]').getAttribute('download') };
			})()`, chromedp.EvalAsValue))
			until(t, ctx, "the downloads", `window.downloaded != null`)
			eval(t, ctx, `window.downloaded`, &got)
			if !got.PNG || !strings.HasPrefix(got.CSV, "city,temperature_c,condition\n") || got.Name != "weather-chart.png" {
				t.Errorf("the downloads: %+v", got)
			}
			run(t, ctx, "reloading the page", chromedp.Reload())
			until(t, ctx, "the files, from the stored history", shown)
		})
	}
}
