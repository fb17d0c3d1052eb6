package offline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	model "github.com/toolnexus/toolnexus-go/internal/offline"
	"google.golang.org/genai"
)

// Model is the model name the examples use on the offline model. Any name
// works; this one starts with "gemini-3", as Gemini 3's do.
const Model = model.ModelName

// Server is the offline model on a loopback port. Its methods may be
// called concurrently.
type Server struct {
	srv *fake.Server
}

// NewServer starts the offline model on a loopback port. The caller must
// call Close when done.
func NewServer() *Server {
	return &Server{srv: model.NewServer()}
}

// Client returns a new genai client of this server, on the Gemini API
// backend. It reads no environment variable.
func (s *Server) Client() *genai.Client {
	return s.srv.Client()
}

// LiveModel is the Live model name to use with [Server.LiveClient]: the
// fake takes names with "live" in them as Live models.
const LiveModel = model.LiveModelName

// LiveClient returns a new genai client of this server's Live API
// (client.Live; its other services fail): the offline model answers a
// live session by the same rules, with calls that carry ids, then the
// answer once every call is answered, in text when the session asks for
// TEXT and otherwise in audio (silence) with the words as its output
// transcription. It hears audio but understands no words: a spoken turn
// (audio, then the microphone's stream or the activity ended) is taken for
// "What is the weather in Paris?", as its input transcription says.
func (s *Server) LiveClient() *genai.Client {
	client, err := genai.NewClient(context.Background(), s.srv.LiveClientConfig())
	if err != nil {
		panic(err) // it does not fail with that configuration
	}
	return client
}

// URL returns the server's base URL, for genai.HTTPOptions.BaseURL.
func (s *Server) URL() string {
	return s.srv.URL
}

// Close shuts the server down: requests in flight fail on the client.
// Close may be called more than once.
func (s *Server) Close() {
	s.srv.Close()
}

var (
	sharedOnce sync.Once
	shared     *Server
)

// Client returns a new genai client of the process's offline model: one
// [Server], started on the first call and never closed. It reads no
// environment variable.
func Client() *genai.Client {
	sharedOnce.Do(func() { shared = NewServer() })
	return shared.Client()
}

// ClientFromEnv returns the client genai.NewClient(ctx, nil) makes when the
// environment configures a Gemini backend (see [Configured]). Otherwise it returns [Client], the offline model's. An
// error is genai.NewClient's, wrapped.
func ClientFromEnv(ctx context.Context) (*genai.Client, error) {
	if !Configured() {
		return Client(), nil
	}
	client, err := genai.NewClient(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("offline: creating the Gemini client the environment configures: %w", err)
	}
	return client, nil
}

// Configured reports whether the environment configures a Gemini backend
// for genai.NewClient(ctx, nil): GEMINI_API_KEY or GOOGLE_API_KEY set, or
// Vertex AI chosen with GOOGLE_GENAI_USE_VERTEXAI or
// GOOGLE_GENAI_USE_ENTERPRISE set to "true" or "1" (genai then reads
// GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION and your Google Cloud
// credentials).
func Configured() bool {
	for _, v := range []string{"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"} {
		switch strings.ToLower(os.Getenv(v)) {
		case "true", "1":
			return true
		}
	}
	return os.Getenv("GEMINI_API_KEY") != "" || os.Getenv("GOOGLE_API_KEY") != ""
}
