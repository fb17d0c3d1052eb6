package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/offline"

	"github.com/google/go-cmp/cmp"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

const weatherQuestion = "What's the weather in Paris and Tokyo?\n"

// -trace prints each answer's span tree to its writer: the run, its model
// calls with their HTTP requests, its tool calls with the spans the tool
// starts, each line with a duration and key attributes.
func TestTraceTree(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	var trees bytes.Buffer
	out := chatOutput(t, options{trace: true, traceOut: &trees}, weatherQuestion+"what time is it in UTC\n")
	if !strings.Contains(out, "Paris: heavy rain") {
		t.Fatalf("no answer:\n%s", out)
	}
	var names []string
	line := regexp.MustCompile(`^( *)(\S.*?)  (\d[\d.]*[nµm]?s)(  .*)?$`)
	for _, l := range strings.Split(strings.TrimSuffix(trees.String(), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q is not `name  duration  attributes`:\n%s", l, trees.String())
		}
		names = append(names, m[1]+m[2])
	}
	want := []string{
		"invoke_agent chat",
		"  generate_content " + offline.ModelName,
		"    HTTP POST",
		"  execute_tool get_weather",
		"    forecast Paris",
		"  execute_tool get_weather",
		"    forecast Tokyo",
		"  generate_content " + offline.ModelName,
		"    HTTP POST",
		"invoke_agent chat", // the second answer
		"  generate_content " + offline.ModelName,
		"    HTTP POST",
		"  execute_tool current_time",
		"  generate_content " + offline.ModelName,
		"    HTTP POST",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("span trees (-want +got):\n%s\n%s", diff, trees.String())
	}
	for _, attr := range []string{"in=", "out=", "finish=tool_call", "finish=stop", "call=fc-", "status=200"} {
		if !strings.Contains(trees.String(), attr) {
			t.Errorf("trees lack %q:\n%s", attr, trees.String())
		}
	}
}

// Without -trace nothing is traced or printed.
func TestNoTraceByDefault(t *testing.T) {
	var trees bytes.Buffer
	chatOutput(t, options{traceOut: &trees}, weatherQuestion)
	if trees.Len() != 0 {
		t.Errorf("printed without -trace:\n%s", trees.String())
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, -trace exports spans and metrics
// over OTLP/HTTP instead of printing them.
func TestTraceOTLP(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string][][]byte{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.URL.Path] = append(bodies[r.URL.Path], b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "chat-under-test")

	var trees bytes.Buffer
	chatOutput(t, options{trace: true, traceOut: &trees}, weatherQuestion)
	if trees.Len() != 0 {
		t.Errorf("printed trees while exporting:\n%s", trees.String())
	}

	mu.Lock()
	defer mu.Unlock()
	var spans []string
	services := map[string]bool{}
	for _, b := range bodies["/v1/traces"] {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					services[kv.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, s.Name)
				}
			}
		}
	}
	slices.Sort(spans)
	want := []string{"HTTP POST", "HTTP POST", "execute_tool get_weather", "execute_tool get_weather", "forecast Paris", "forecast Tokyo",
		"generate_content " + offline.ModelName, "generate_content " + offline.ModelName, "invoke_agent chat"}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("exported spans (-want +got):\n%s", diff)
	}
	if !services["chat-under-test"] || len(services) != 1 {
		t.Errorf("service names %v, want chat-under-test (OTEL_SERVICE_NAME)", services)
	}

	var metrics []string
	for _, b := range bodies["/v1/metrics"] {
		var req colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					metrics = append(metrics, m.Name)
				}
			}
		}
	}
	for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "http.client.request.duration"} {
		if !slices.Contains(metrics, name) {
			t.Errorf("exported metrics %v lack %s", metrics, name)
		}
	}
}
