package otelagent

import (
	"net/url"

	"github.com/toolnexus/toolnexus-go/agent"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// An Option configures an [Observer]; pass options to [New].
type Option func(*config)

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	name      string
	capture   *bool
	provider  attribute.KeyValue
	address   string
	port      int
	operation string // the model calls' gen_ai.operation.name
}

// WithTracerProvider sets the provider of the spans' tracer. Nil, or no
// option, means the global provider (otel.GetTracerProvider), looked up
// when New is called; the global one forwards to a provider installed
// later with otel.SetTracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	}
}

// WithMeterProvider sets the provider of the metrics' meter. Nil, or no
// option, means the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	}
}

// WithAgentName names the agent the Observer is installed on: the span of
// each of its runs is then "invoke_agent {name}", with gen_ai.agent.name.
// The runs of agents its tools run (agent.AsTool), which report to its
// Observer too, are named after their own agent. Without it, every run is
// named after its agent's Config.Name (Event.Agent), and a run of an
// agent with no name is "invoke_agent".
func WithAgentName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithCaptureContent turns the recording of content on or off: the
// messages sent and received (gen_ai.input.messages,
// gen_ai.output.messages), the system instruction
// (gen_ai.system_instructions), the tools declared (gen_ai.tool.definitions)
// and each tool call's arguments and result (gen_ai.tool.call.arguments,
// gen_ai.tool.call.result), as JSON strings in the shapes the conventions
// define. Content may hold personal data, so it is off by default. Without
// this option the environment decides:
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true turns it on.
func WithCaptureContent(on bool) Option {
	return func(c *config) { c.capture = &on }
}

// WithClient tells the observer which backend and server the agent's model
// calls go to, from the genai client the agent calls: gen_ai.provider.name
// is gcp.gemini for the Gemini API and gcp.vertex_ai for Vertex AI (and the
// Gemini Enterprise Agent Platform, served by aiplatform.googleapis.com),
// and server.address and server.port come from the client's base URL.
// Only the backend and the base URL are read; the client's credentials are
// never kept.
//
// Without it, the observer cannot know where the calls go (an agent's
// Models may be anything): gen_ai.provider.name is gcp.gen_ai ("any Google
// generative AI endpoint") and the server attributes are left out.
func WithClient(client *genai.Client) Option {
	return func(c *config) {
		if client == nil {
			return
		}
		cc := client.ClientConfig()
		c.provider, c.address, c.port = endpoint(cc.Backend, cc.HTTPOptions.BaseURL)
	}
}

// OperationCreateInteraction is the gen_ai.operation.name of a model call
// made on Gemini's Interactions API (see [WithModels]), the name of the
// API's method, as generate_content is generateContent's.
const OperationCreateInteraction = "create_interaction"

// WithModels tells the observer what the agent's Models is, when it says
// so itself: a Models with an API method naming the Interactions API
// (package geminiinteractions' Models) makes its model calls
// create_interaction spans ("create_interaction {model}", with
// gen_ai.operation.name create_interaction, in the spans and the metrics);
// a Models with a ClientConfig method names its provider and server, as
// [WithClient] does. For genai's client.Models, which says neither, use
// WithClient. Give it the value given as agent.Config.Models.
func WithModels(m agent.Models) Option {
	return func(c *config) {
		if a, ok := m.(interface{ API() string }); ok && a.API() == "interactions" {
			c.operation = OperationCreateInteraction
		}
		if cc, ok := m.(interface{ ClientConfig() genai.ClientConfig }); ok {
			cfg := cc.ClientConfig()
			c.provider, c.address, c.port = endpoint(cfg.Backend, cfg.HTTPOptions.BaseURL)
		}
	}
}

// endpoint returns the provider, server address and port of a genai
// client's backend and base URL.
func endpoint(backend genai.Backend, baseURL string) (provider attribute.KeyValue, address string, port int) {
	provider = semconv.GenAIProviderNameGCPGemini
	if backend == genai.BackendVertexAI || backend == genai.BackendEnterprise {
		provider = semconv.GenAIProviderNameGCPVertexAI
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return provider, "", 0
	}
	port, _ = strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		}
	}
	return provider, u.Hostname(), port
}

// captureFromEnv reports whether the environment asks for content capture.
func captureFromEnv() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(CaptureContentEnv)), "true")
}

// CaptureContentEnv is the environment variable that turns content capture
// on when it is "true" (in any case) and no [WithCaptureContent] option is
// given: the variable other OpenTelemetry GenAI instrumentations read.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
