package a2aagent

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
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
		ProtocolVersion:    ProtocolVersion,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
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

// serveCard answers GET CardPath.
func (h *handler) serveCard(w http.ResponseWriter, r *http.Request) {
	card := *h.card
	card.URL = h.cardURL(r)
	body, err := json.Marshal(&card)
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

// cardURL is the card's url for a card served in answer to r.
func (h *handler) cardURL(r *http.Request) string {
	if h.url.IsAbs() {
		return h.url.String()
	}
	u := *h.url
	u.Scheme, u.Host = "http", r.Host
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String()
}
