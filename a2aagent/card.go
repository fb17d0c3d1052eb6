package a2aagent

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/toolnexus/toolnexus-go/agentserver"
)

// deriveCard makes the card of s's agent, as opts say: its url is filled
// in per request when Options.URL is a path.
func deriveCard(s *agentserver.Server, opts *Options) *a2a.AgentCard {
	steps := s.Agent().Steps()
	var tools []string
	if set := steps.Tools(); set != nil {
		for _, t := range set.Tools() {
			tools = append(tools, t.Name)
		}
	}
	name := first(opts.Name, steps.Name(), "agent")
	desc := opts.Description
	if desc == "" {
		desc = "An agent that answers in text"
		if steps.Typed() {
			desc = "An agent that answers with a JSON value"
		}
		if len(tools) > 0 {
			desc += ", using the tools " + strings.Join(tools, ", ")
		}
		desc += "."
	}
	out := []string{"text/plain"}
	if steps.Typed() {
		out = []string{"application/json", "text/plain"}
	}
	card := &a2a.AgentCard{
		Name:               name,
		Description:        desc,
		Version:            first(opts.Version, "1.0.0"),
		ProtocolVersion:    LegacyProtocolVersion,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: !opts.Push.Disabled},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: out,
		Skills:             opts.Skills,
	}
	if card.Skills == nil {
		card.Skills = []a2a.AgentSkill{{ID: name, Name: name, Description: desc, Tags: []string{"llm"}}}
		if set := steps.Tools(); set != nil {
			for _, t := range set.Tools() {
				d := t.Description
				if d == "" {
					d = "The tool " + t.Name + "."
				}
				card.Skills = append(card.Skills, a2a.AgentSkill{ID: name + "-" + t.Name, Name: t.Name, Description: d, Tags: []string{"llm", "tools"}})
			}
		}
	}
	if opts.Card != nil {
		opts.Card(card)
	}
	return card
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// serveCard answers GET CardPath: one card that clients of both versions
// read, 1.0's supportedInterfaces (1.0 JSON-RPC, 1.0 HTTP+JSON, 0.3
// JSON-RPC, in this order) beside 0.3's url and preferredTransport (the
// 0.3 endpoint), as a2a-go/v2's a2av0 writes such a union.
func (h *handler) serveCard(w http.ResponseWriter, r *http.Request) {
	body, err := h.cardJSON(r)
	if err != nil {
		h.s.WriteError(w, r, err)
		return
	}
	body = append(body, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("Cache-Control", "max-age=60")
	hd.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// cardJSON is the card served in answer to r.
func (h *handler) cardJSON(r *http.Request) ([]byte, error) {
	card := *h.card
	card.URL = h.cardURL(r, h.url.Path)
	legacy, err := json.Marshal(&card)
	if err != nil {
		return nil, err
	}
	v1, err := a2av0.NewAgentCardParser()(legacy)
	if err != nil {
		return nil, err
	}
	v1.SupportedInterfaces = []*a2av1.AgentInterface{
		{URL: h.cardURL(r, h.v1Path), ProtocolBinding: a2av1.TransportProtocolJSONRPC, ProtocolVersion: ProtocolVersion},
		{URL: h.cardURL(r, h.restPath), ProtocolBinding: a2av1.TransportProtocolHTTPJSON, ProtocolVersion: ProtocolVersion},
		{URL: card.URL, ProtocolBinding: a2av1.TransportProtocolJSONRPC, ProtocolVersion: LegacyProtocolVersion},
	}
	p := a2av0.NewStaticAgentCardProducer(v1).(a2asrv.AgentCardJSONProducer)
	return p.CardJSON(r.Context())
}

// cardURL is the url of the endpoint at path for a card served in answer
// to r.
func (h *handler) cardURL(r *http.Request, path string) string {
	u := *h.url
	u.Path = path
	if h.url.IsAbs() {
		return u.String()
	}
	u.Scheme, u.Host = "http", r.Host
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String()
}
