package fake

import "google.golang.org/genai"

// This file holds the helpers a test uses to read a recorded request.

// FunctionCalls returns the function calls in r's history (the model's
// turns it sends back), in order; with a name, only the calls of that name.
func (r *Request) FunctionCalls(name string) []*genai.FunctionCall {
	var out []*genai.FunctionCall
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil && (name == "" || fc.Name == name) {
				out = append(out, fc)
			}
		}
	}
	return out
}

// FunctionResponses returns the function responses r sends, in order,
// from every turn of its history; with a name, only the responses of that
// name. The answers to the model's latest calls are those of the last
// content: see [Request.LastFunctionResponses].
func (r *Request) FunctionResponses(name string) []*genai.FunctionResponse {
	return functionResponses(r.Contents, name)
}

// LastFunctionResponses returns the function responses of r's last
// content: what the client answered to the calls of the previous reply;
// with a name, only the responses of that name.
func (r *Request) LastFunctionResponses(name string) []*genai.FunctionResponse {
	if len(r.Contents) == 0 {
		return nil
	}
	return functionResponses(r.Contents[len(r.Contents)-1:], name)
}

func functionResponses(cs []*genai.Content, name string) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, c := range cs {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && (name == "" || fr.Name == name) {
				out = append(out, fr)
			}
		}
	}
	return out
}

// FunctionDeclaration returns the declaration of the function named name
// among r's tools, or nil.
func (r *Request) FunctionDeclaration(name string) *genai.FunctionDeclaration {
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == name {
				return d
			}
		}
	}
	return nil
}

// Text returns the text of r's last content: the user's latest message.
// Thought parts are skipped.
func (r *Request) Text() string {
	if len(r.Contents) == 0 {
		return ""
	}
	var s string
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if !p.Thought {
			s += p.Text
		}
	}
	return s
}
