package offline

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type weatherIn struct {
	City string `json:"city"`
}

// ask runs the README's first program on client: a typed get_weather tool
// and a question about two cities.
func ask(t *testing.T, client *genai.Client) (*agent.Result, []string) {
	t.Helper()
	var (
		mu     sync.Mutex
		cities []string
	)
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in weatherIn) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			cities = append(cities, in.City)
			return "sunny in " + in.City, nil
		})
	res, err := agent.Run(t.Context(), agent.Config{Models: client.Models, Model: "gemini-3.5-flash",
		Tools: toolset.MustNew(weather)}, genai.Text("What's the weather in Paris and Tokyo?"))
	if err != nil {
		t.Fatalf("agent.Run() = %v", err)
	}
	return res, cities
}

func TestServerAnswersThroughTools(t *testing.T) {
	srv := NewServer()
	t.Cleanup(srv.Close)
	res, cities := ask(t, srv.Client())
	if strings.Join(cities, ",") != "Paris,Tokyo" && strings.Join(cities, ",") != "Tokyo,Paris" {
		t.Errorf("get_weather called for %q, want Paris and Tokyo", cities)
	}
	if !strings.Contains(res.Text, "sunny in Paris") || !strings.Contains(res.Text, "sunny in Tokyo") {
		t.Errorf("answer = %q, want both results in it", res.Text)
	}
}

// closeShared closes the process's shared server when the test ends, so
// that goleak finds no server goroutine.
func closeShared(t *testing.T) {
	t.Cleanup(func() {
		if shared != nil {
			shared.Close()
			shared, sharedOnce = nil, sync.Once{}
		}
	})
}

func clearEnv(t *testing.T) {
	for _, v := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE",
		"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"} {
		t.Setenv(v, "") // restored when the test ends
		os.Unsetenv(v)  // genai tells an empty variable from an unset one
	}
}

// Without a key, genai.NewClient(ctx, nil) fails with a long "api key is
// required" message; ClientFromEnv gives the offline model instead.
func TestClientFromEnvWithoutKeyIsOffline(t *testing.T) {
	clearEnv(t)
	closeShared(t)
	client, err := ClientFromEnv(t.Context())
	if err != nil {
		t.Fatalf("ClientFromEnv() error = %v, want the offline model's client", err)
	}
	if got := client.ClientConfig().HTTPOptions.BaseURL; got != shared.URL() {
		t.Errorf("client base URL = %q, want the offline server's %q", got, shared.URL())
	}
	if res, _ := ask(t, client); !strings.Contains(res.Text, "sunny in Paris") {
		t.Errorf("answer = %q", res.Text)
	}
	if second := Client(); second.ClientConfig().HTTPOptions.BaseURL != shared.URL() {
		t.Errorf("a second Client() talks to %q, want the same server %q", second.ClientConfig().HTTPOptions.BaseURL, shared.URL())
	}
}

func TestClientFromEnv(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		wantBackend genai.Backend
		wantErr     string
	}{
		{name: "GEMINI_API_KEY", env: map[string]string{"GEMINI_API_KEY": "k1"}, wantBackend: genai.BackendGeminiAPI},
		{name: "GOOGLE_API_KEY", env: map[string]string{"GOOGLE_API_KEY": "k2"}, wantBackend: genai.BackendGeminiAPI},
		{name: "Vertex AI", env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "True", "GOOGLE_API_KEY": "k3"},
			wantBackend: genai.BackendVertexAI},
		{name: "Vertex AI without a project", env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1"},
			wantErr: "offline: creating the Gemini client"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if !Configured() {
				t.Fatalf("Configured() = false with %v", tc.env)
			}
			client, err := ClientFromEnv(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ClientFromEnv() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ClientFromEnv() = %v", err)
			}
			if got := client.ClientConfig().Backend; got != tc.wantBackend {
				t.Errorf("backend = %v, want %v", got, tc.wantBackend)
			}
			if shared != nil {
				t.Errorf("the offline server started although %v configures Gemini", tc.env)
			}
		})
	}
}

// The offline model answers a live session: the calls, then, once they
// are answered, the text that sums them up.
func TestServerAnswersLive(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	weather := &genai.FunctionDeclaration{Name: "get_weather", Parameters: &genai.Schema{Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}}
	sess, err := srv.LiveClient().Live.Connect(t.Context(), LiveModel, &genai.LiveConnectConfig{
		ResponseModalities: []genai.Modality{genai.ModalityText},
		Tools:              []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weather}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: "What's the weather in Oslo?"}); err != nil {
		t.Fatal(err)
	}
	var answer string
	for answer == "" {
		m, err := sess.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if m.ToolCall != nil {
			c := m.ToolCall.FunctionCalls[0]
			if err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
				{ID: c.ID, Name: c.Name, Response: map[string]any{"result": "sunny in " + c.Args["city"].(string)}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if m.ServerContent != nil && m.ServerContent.ModelTurn != nil {
			answer = m.ServerContent.ModelTurn.Parts[0].Text
		}
	}
	if answer != "get_weather: sunny in Oslo" {
		t.Errorf("answer %q", answer)
	}
}
