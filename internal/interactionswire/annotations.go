package interactionswire

import (
	"encoding/json"

	"google.golang.org/genai"
)

// DeltaAnnotations is the type of the step.delta that adds annotations to
// a streamed text: {"type": "text_annotation_delta", "annotations": […]}
// (textannotationdelta.go).
const DeltaAnnotations = "text_annotation_delta"

// Annotation is a text's citation of a source: a url_citation's URL and
// title, or a file_citation's document, with the range of the text it
// grounds, in bytes (annotation.go, urlcitation.go, filecitation.go).
type Annotation struct {
	Type        string `json:"type"`
	URL         string `json:"url,omitempty"`
	Title       string `json:"title,omitempty"`
	DocumentURI string `json:"document_uri,omitempty"`
	FileName    string `json:"file_name,omitempty"`
	StartIndex  int32  `json:"start_index,omitempty"`
	EndIndex    int32  `json:"end_index,omitempty"`
}

// Sources returns what the annotations of steps' text cite, as
// generateContent says it: each url_citation and file_citation a citation
// of the candidate's text (its range counted from the start of the whole
// answer), and together the grounding of the answer: one web (or
// retrieved-context) chunk per source, and one support per annotation.
// Both are nil when no text is annotated.
func Sources(steps []Step) (*genai.GroundingMetadata, []*genai.Citation) {
	var (
		g         *genai.GroundingMetadata
		citations []*genai.Citation
		text      []byte // the answer so far
		chunks    = map[string]int32{}
	)
	for _, s := range steps {
		if s.Type != TypeModelOutput {
			continue
		}
		for _, c := range s.Content {
			if c.Type != "text" {
				continue
			}
			base := int32(len(text))
			text = append(text, c.Text...)
			var anns []Annotation
			if len(c.Annotations) == 0 || json.Unmarshal(c.Annotations, &anns) != nil {
				continue
			}
			for _, a := range anns {
				uri, title := a.URL, a.Title
				if a.Type == "file_citation" {
					uri, title = a.DocumentURI, a.FileName
				}
				if a.Type != "url_citation" && a.Type != "file_citation" || uri == "" {
					continue
				}
				start, end := base+a.StartIndex, base+a.EndIndex
				citations = append(citations, &genai.Citation{URI: uri, Title: title, StartIndex: start, EndIndex: end})
				if g == nil {
					g = &genai.GroundingMetadata{}
				}
				idx, ok := chunks[uri]
				if !ok {
					idx = int32(len(g.GroundingChunks))
					chunks[uri] = idx
					chunk := &genai.GroundingChunk{Web: &genai.GroundingChunkWeb{URI: uri, Title: title}}
					if a.Type == "file_citation" {
						chunk = &genai.GroundingChunk{RetrievedContext: &genai.GroundingChunkRetrievedContext{URI: uri, Title: title}}
					}
					g.GroundingChunks = append(g.GroundingChunks, chunk)
				}
				seg := &genai.Segment{StartIndex: start, EndIndex: end}
				if start >= 0 && end <= int32(len(text)) && start <= end {
					seg.Text = string(text[start:end])
				}
				g.GroundingSupports = append(g.GroundingSupports, &genai.GroundingSupport{GroundingChunkIndices: []int32{idx}, Segment: seg})
			}
		}
	}
	return g, citations
}

// Annotate adds to the last text of steps the annotations that say g and
// citations, generateContent's grounding and citations of an answer: a
// url_citation for each citation, and for each support of each chunk it
// names (a web chunk's URL, a retrieved context's document). Ranges are
// the answer's: exact when the answer is one text, as a server's is.
func Annotate(steps []Step, g *genai.GroundingMetadata, citations []*genai.Citation) {
	var anns []Annotation
	seen := map[Annotation]bool{}
	add := func(a Annotation) {
		if !seen[a] {
			seen[a] = true
			anns = append(anns, a)
		}
	}
	for _, c := range citations {
		if c != nil && c.URI != "" {
			add(Annotation{Type: "url_citation", URL: c.URI, Title: c.Title, StartIndex: c.StartIndex, EndIndex: c.EndIndex})
		}
	}
	if g != nil {
		for _, sup := range g.GroundingSupports {
			if sup == nil || sup.Segment == nil {
				continue
			}
			for _, i := range sup.GroundingChunkIndices {
				if int(i) >= len(g.GroundingChunks) || g.GroundingChunks[i] == nil {
					continue
				}
				ch := g.GroundingChunks[i]
				a := Annotation{StartIndex: sup.Segment.StartIndex, EndIndex: sup.Segment.EndIndex}
				switch {
				case ch.Web != nil:
					a.Type, a.URL, a.Title = "url_citation", ch.Web.URI, ch.Web.Title
				case ch.RetrievedContext != nil:
					a.Type, a.DocumentURI, a.FileName = "file_citation", ch.RetrievedContext.URI, ch.RetrievedContext.Title
				default:
					continue
				}
				add(a)
			}
		}
	}
	if len(anns) == 0 {
		return
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Type != TypeModelOutput {
			continue
		}
		for j := len(steps[i].Content) - 1; j >= 0; j-- {
			if c := &steps[i].Content[j]; c.Type == "text" {
				c.Annotations, _ = json.Marshal(anns)
				return
			}
		}
	}
}
