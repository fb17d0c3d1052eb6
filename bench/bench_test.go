package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"google.golang.org/genai"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(serveEnv); sc != "" {
		// The fake server's process of a -load or -apis measurement (see child.go).
		if err := serveChild(sc); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	installTracerProvider() // as main does, before any contestant
	os.Exit(m.Run())
}

// TestLoad runs -load on a few conversations: both measurements complete,
// every run gets its answer, the fake server in its own process finds
// every request well formed, and no goroutine is left.
func TestLoad(t *testing.T) {
	var out strings.Builder
	if err := runLoad(&out, 20); err != nil {
		t.Fatalf("runLoad: %v\n%s", err, out.String())
	}
	for _, want := range []string{"| runs/s |", "| waiting for its first model answer, on its own connection |",
		"| waiting in its 2 tool calls, no connection open |", "Agent.Stream", "raw genai streaming loop"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report has no %q:\n%s", want, out.String())
		}
	}
}

// TestContestants runs every contestant for a few loops of every scenario
// it supports, through the runner's own measure, which fails on a loop
// error, a malformed request or a loop that did not get the scripted
// answer.
func TestContestants(t *testing.T) {
	loops := 3
	if testing.Short() {
		loops = 1
	}
	for _, sc := range scenarios {
		for _, c := range contestants {
			t.Run(sc.name+"/"+c.key, func(t *testing.T) {
				srv := newServer(sc)
				defer srv.Close()
				loop, cleanup, err := c.setup(srv.URL(), sc)
				if errors.Is(err, errUnsupported) {
					if c.key == baselineKey || sc.name == "two-call" {
						t.Fatalf("%s must support %s", c.key, sc.name)
					}
					t.Skip("unsupported")
				}
				if err != nil {
					t.Fatalf("setup: %v", err)
				}
				if cleanup != nil {
					defer cleanup()
				}
				e := &entry{row: &row{c: c}, srv: srv, loop: loop}
				if _, allocs, err := measure(e, loops, time.Minute); err != nil {
					t.Fatal(err)
				} else if allocs <= 0 {
					t.Errorf("allocs/loop = %v, want > 0", allocs)
				}
				if got, want := srv.requests.Load(), int64(loops*sc.requests()); got != want {
					t.Errorf("%d requests for %d loops, want %d", got, loops, want)
				}
				if n := srv.notes(); n != "" {
					t.Logf("notes: %s", n)
				}
			})
		}
	}
}

// TestRawIsClean checks that the floor follows the protocol to the letter:
// ids echoed, signatures kept, responses under role user.
func TestRawIsClean(t *testing.T) {
	for _, sc := range scenarios {
		srv := newServer(sc)
		loop, _, err := setupRaw(srv.URL(), sc)
		if err != nil {
			t.Fatal(err)
		}
		if err := loop(context.Background()); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		if n := srv.notes(); n != "" {
			t.Errorf("%s: raw loop deviates: %s", sc.name, n)
		}
		srv.Close()
	}
}

// TestMeasureFailsWithoutAnswers: a loop that returns without holding the
// scripted conversation is not measured.
func TestMeasureFailsWithoutAnswers(t *testing.T) {
	srv := newServer(scenarios[0])
	defer srv.Close()
	e := &entry{row: &row{c: contestant{key: "lazy"}}, srv: srv, loop: func(context.Context) error { return nil }}
	if _, _, err := measure(e, 2, time.Minute); err == nil || !strings.Contains(err.Error(), "scripted answers") {
		t.Fatalf("measure = %v, want an error about missing answers", err)
	}
}

// validTwoCall returns a well-formed two-call history (prompt, model turn,
// responses) and config, for the rejection tests to break.
func validTwoCall() ([]*genai.Content, *genai.GenerateContentConfig) {
	sc := scenarios[0]
	decls, _ := rawDeclarations(sc)
	model := &genai.Content{Role: genai.RoleModel}
	user := &genai.Content{Role: genai.RoleUser}
	for i := range sc.calls {
		p := genai.NewPartFromFunctionCall(weatherTool, map[string]any{"city": cities[i]})
		p.FunctionCall.ID = callID(0, i)
		model.Parts = append(model.Parts, p)
		r := genai.NewPartFromFunctionResponse(weatherTool, map[string]any{"output": weather(cities[i])})
		r.FunctionResponse.ID = callID(0, i)
		user.Parts = append(user.Parts, r)
	}
	model.Parts[0].ThoughtSignature = []byte("bench-thought-signature-0")
	contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser), model, user}
	return contents, &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
}

// TestServerRejects sends malformed conversations and expects each to fail
// with a 400 and to be recorded.
func TestServerRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(cs []*genai.Content, cfg *genai.GenerateContentConfig) []*genai.Content
		want   string
	}{
		{"valid", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content { return cs }, ""},
		{"missing response", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Parts = cs[2].Parts[:1]
			return cs
		}, "one functionResponse part for each"},
		{"responses in separate contents", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			second := &genai.Content{Role: genai.RoleUser, Parts: cs[2].Parts[1:]}
			cs[2].Parts = cs[2].Parts[:1]
			return append(cs, second)
		}, "contents"},
		{"wrong id", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Parts[1].FunctionResponse.ID = "fc-9-9"
			return cs
		}, "not a call of this turn"},
		{"answered twice", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Parts[1].FunctionResponse.ID = callID(0, 0)
			return cs
		}, "answered twice"},
		{"model turn altered", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[1].Parts[1].FunctionCall.Args = map[string]any{"city": "Rome"}
			return cs
		}, "args.city"},
		{"model turn dropped", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			return []*genai.Content{cs[0], cs[2]}
		}, "contents"},
		{"empty part", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Parts = append(cs[2].Parts, &genai.Part{})
			return cs
		}, "parts"},
		{"response without object", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Parts[0].FunctionResponse.Response = nil
			return cs
		}, "no response object"},
		{"turn beyond the script", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			return append(cs, cs[1], cs[2])
		}, "only 1 tool turns"},
		{"empty tool group", func(cs []*genai.Content, cfg *genai.GenerateContentConfig) []*genai.Content {
			cfg.Tools = append(cfg.Tools, &genai.Tool{})
			return cs
		}, "declares no function"},
		{"tool missing", func(cs []*genai.Content, cfg *genai.GenerateContentConfig) []*genai.Content {
			cfg.Tools = nil
			return cs
		}, "functions declared"},
		{"wrong role", func(cs []*genai.Content, _ *genai.GenerateContentConfig) []*genai.Content {
			cs[2].Role = genai.RoleModel
			return cs
		}, "want user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(scenarios[0])
			defer srv.Close()
			client, err := newClient(srv.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, cfg := validTwoCall()
			cs = tc.mutate(cs, cfg)
			resp, err := client.Models.GenerateContent(context.Background(), benchModel, cs, cfg)
			if tc.want == "" {
				if err != nil || srv.Err() != nil {
					t.Fatalf("valid request: %v / %v", err, srv.Err())
				}
				if got := resp.Text(); got != answer {
					t.Fatalf("answer %q, want %q", got, answer)
				}
				if n := srv.notes(); n != "" {
					t.Errorf("valid request has notes: %s", n)
				}
				return
			}
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest {
				t.Fatalf("err = %v, want a 400", err)
			}
			if srv.Err() == nil || !strings.Contains(srv.Err().Error(), tc.want) {
				t.Fatalf("recorded %v, want it to mention %q", srv.Err(), tc.want)
			}
		})
	}
}

// TestServerTolerates checks that the deviations of older SDKs are counted
// as notes, not failures.
func TestServerTolerates(t *testing.T) {
	srv := newServer(scenarios[0])
	defer srv.Close()
	client, err := newClient(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, cfg := validTwoCall()
	cs[2].Role = "tool"
	cs[1].Parts[0].ThoughtSignature = nil
	for _, p := range append(cs[1].Parts, cs[2].Parts...) {
		if p.FunctionCall != nil {
			p.FunctionCall.ID = ""
		} else {
			p.FunctionResponse.ID = ""
		}
	}
	if _, err := client.Models.GenerateContent(context.Background(), benchModel, cs, cfg); err != nil {
		t.Fatal(err)
	}
	notes := srv.notes()
	for _, want := range []string{"without the call's id", `role "tool"`, "thoughtSignature dropped"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not mention %q", notes, want)
		}
	}
}

// TestServerRoutes checks the routes, the key and the three reply forms.
func TestServerRoutes(t *testing.T) {
	srv := newServer(scenarios[1])
	defer srv.Close()
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT"}}]}]}`
	post := func(path string, header bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+path, strings.NewReader(body))
		if header {
			req.Header.Set("x-goog-api-key", apiKey)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const base = "/v1beta/models/" + benchModel
	if code, b := post(base+":generateContent", true); code != 200 || !strings.HasPrefix(b, `{"candidates"`) || !strings.Contains(b, `"id":"fc-0-0"`) {
		t.Errorf("generateContent: %d %s", code, b)
	}
	if code, b := post(base+":streamGenerateContent?alt=sse", true); code != 200 || !strings.HasPrefix(b, "data: {") || !strings.HasSuffix(b, "\r\n\r\n") {
		t.Errorf("SSE: %d %q", code, b)
	}
	if code, b := post(base+":streamGenerateContent?key="+apiKey, false); code != 200 || !strings.HasPrefix(b, "[") || !strings.HasSuffix(b, "]") {
		t.Errorf("JSON array with ?key=: %d %s", code, b)
	}
	if srv.Err() != nil {
		t.Fatalf("valid requests recorded %v", srv.Err())
	}
	if code, _ := post(base+":generateContent", false); code != http.StatusForbidden {
		t.Errorf("no key: %d, want 403", code)
	}
	if code, _ := post("/v1beta/models/other-model:generateContent", true); code != http.StatusNotFound {
		t.Errorf("wrong model: %d, want 404", code)
	}
	if code, _ := post(base+":countTokens", true); code != http.StatusNotFound {
		t.Errorf("unknown method: %d, want 404", code)
	}
}

// TestServerStreams checks that the genai SDK reads the SSE replies: the
// tool turn in one chunk, the answer over two.
func TestServerStreams(t *testing.T) {
	srv := newServer(scenarios[0])
	defer srv.Close()
	client, err := newClient(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, cfg := validTwoCall()
	var calls, chunks int
	for resp, err := range client.Models.GenerateContentStream(context.Background(), benchModel, cs[:1], cfg) {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		calls += len(resp.FunctionCalls())
	}
	if chunks != 1 || calls != 2 {
		t.Errorf("tool turn: %d chunks, %d calls; want 1 chunk of 2 calls", chunks, calls)
	}
	var text strings.Builder
	var finish genai.FinishReason
	chunks = 0
	for resp, err := range client.Models.GenerateContentStream(context.Background(), benchModel, cs, cfg) {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		text.WriteString(resp.Text())
		finish = resp.Candidates[0].FinishReason
	}
	if chunks != 2 || text.String() != answer || finish != genai.FinishReasonStop {
		t.Errorf("answer: %d chunks, %q, %s; want 2 chunks, %q, STOP", chunks, text.String(), finish, answer)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}

// rewindBody is a request body that can be replayed without allocating.
type rewindBody struct {
	data []byte
	off  int
}

func (b *rewindBody) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *rewindBody) Close() error { return nil }

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// TestServerIsLean checks that the handler itself (decode, check, reply)
// does not allocate per request once warm, so that it costs every
// contestant the same and next to nothing.
func TestServerIsLean(t *testing.T) {
	srv := newServer(scenarios[0])
	defer srv.Close()
	var buf bytes.Buffer
	cs, cfg := validTwoCall()
	client, err := newClient(srv.URL(), &http.Client{Transport: captureTransport{&buf}})
	if err != nil {
		t.Fatal(err)
	}
	client.Models.GenerateContent(context.Background(), benchModel, cs, cfg) // captures the body; the reply is irrelevant

	body := &rewindBody{data: buf.Bytes()}
	req := httptest.NewRequest(http.MethodPost, "/v1beta/models/"+benchModel+":generateContent", body)
	req.Header.Set("X-Goog-Api-Key", apiKey)
	w := &discardWriter{h: http.Header{}}
	allocs := testing.AllocsPerRun(100, func() {
		body.off = 0
		srv.ServeHTTP(w, req)
	})
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	if srv.answers.Load() == 0 {
		t.Fatal("the captured request was not answered")
	}
	t.Logf("handler allocations per request: %v", allocs)
	if allocs > 1 {
		t.Errorf("handler allocates %v times per request, want at most 1", allocs)
	}
}

// captureTransport records the request body and fails the request.
type captureTransport struct{ buf *bytes.Buffer }

func (c captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.buf.ReadFrom(r.Body)
	return nil, errors.New("captured")
}

// TestToolsetToolsMatchRaw checks that the tools the contestants built on
// this module declare (toolsetTools through geminiadapter) go on the wire
// exactly as the raw loop's declarations.
func TestToolsetToolsMatchRaw(t *testing.T) {
	for _, sc := range scenarios {
		got, err := geminiadapter.Tools(toolsetTools(sc)...)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := rawDeclarations(sc)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal([]*genai.Tool{{FunctionDeclarations: want}})
		if !bytes.Equal(g, w) {
			t.Fatalf("%s: toolset declarations\n%s\nraw declarations\n%s", sc.name, g, w)
		}
	}
}

func TestThousands(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 24617.4: "24,617", 1234567: "1,234,567"} {
		if got := thousands(x); got != want {
			t.Errorf("thousands(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestFanoutAndLoad runs the -fanout and -load measurements small: they
// must complete, and the load must leave no goroutine behind.
func TestFanoutAndLoad(t *testing.T) {
	if err := runFanout(io.Discard, 1); err != nil {
		t.Fatal(err)
	}
	if err := runLoad(io.Discard, 50); err != nil {
		t.Fatal(err)
	}
}

// runServeLatency measures every chunk through each consumer.
func TestServeLatency(t *testing.T) {
	var out bytes.Buffer
	if err := runServeLatency(&out, 20, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Agent.Stream's consumer", "AI SDK client over HTTP", "AG-UI client over HTTP"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAPIs runs the API comparison once: every contestant's conversation
// completes on the fake in its own process, which checks every request;
// generateContent's bytes grow with the history, the Interactions API's
// stay flat.
func TestAPIs(t *testing.T) {
	var out bytes.Buffer
	if err := runAPIs(&out, 1, ""); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	checked := 0
	for _, line := range strings.Split(out.String(), "\n") {
		fields := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| contestant") || len(fields) != 9 {
			continue // not a row of the bytes table
		}
		name := strings.TrimSpace(fields[1])
		var n [6]int
		for i := range n {
			fmt.Sscan(strings.TrimSpace(fields[i+2]), &n[i])
		}
		t1, t2, t30 := n[0], n[1], n[4]
		switch {
		case strings.Contains(name, "Trimmer"):
		case strings.HasPrefix(name, "generateContent") && t30 < 20*t1:
			t.Errorf("%s: turn 30 sent %d bytes, turn 1 %d; want growth with the history", name, t30, t1)
		case strings.HasPrefix(name, "Interactions") && t30 > t2+t2/10:
			t.Errorf("%s: turn 30 sent %d bytes, turn 2 %d; want them flat", name, t30, t2)
		}
		checked++
	}
	if checked != len(apiContestants) {
		t.Errorf("read %d rows of the bytes table; want %d", checked, len(apiContestants))
	}
}
