package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// DefaultExtractionInstruction is what an [Extraction]'s model is told.
const DefaultExtractionInstruction = `You keep the long-term memory of an assistant about one user.
You are given the facts already remembered about the user, each with its id, and the new part of a conversation between the user and the assistant, each message with its index, author and date.
Write the facts about the user, or about what the user told, that are worth remembering in later conversations: who the user is, what they like, plan, own, decided or did, with names and absolute dates (say "in May 2023", never "last month": use the messages' dates). Each fact is one short sentence that makes sense on its own, naming the user by name when the conversation gives it, else "The user".
Write nothing that is already remembered in the same words. When a new fact contradicts or updates a remembered one (the user moved, changed their mind, a plan happened or was cancelled), write the new fact and list the ids of the remembered facts it replaces in "replaces".
For each fact, "message" is the index of the message it comes from. Write no fact about the assistant, and none from small talk. If there is nothing worth remembering, return an empty list.`

// Defaults of Extraction.
const (
	DefaultMaxRelated        = 20
	DefaultExtractionTimeout = 2 * time.Minute
)

// Extraction has a model read each conversation a [Service] ingests with
// IngestThread and write the facts worth remembering about the user, in
// the background: after the run, never on its path. The facts join the
// user's memories (KindFact), with the thread and message they came from;
// a fact that contradicts or updates one remembered before replaces it
// (the model is shown the remembered facts the conversation's words find,
// and says which its facts replace, as Vertex AI's Memory Bank and mem0
// consolidate). The conversation's messages are remembered as they are
// whatever happens to their extraction: a failure loses no memory. Each
// attempt's cost is reported (EventExtract's Usage); a failed attempt is
// retried (Config.MaxAttempts in all), then reported as final and logged.
type Extraction struct {
	// Models and Model make the calls (a genai client's Models and, say,
	// "gemini-3.5-flash"). Required.
	Models agent.Models
	Model  string

	// Instruction is the system instruction. Empty means
	// DefaultExtractionInstruction.
	Instruction string

	// GenerateConfig is sent with each call (thinking, sampling…); its
	// system instruction is replaced by Instruction. Nil sends none.
	GenerateConfig *genai.GenerateContentConfig

	// MaxRelated bounds the remembered facts shown to the model, those the
	// conversation's words find first. Zero means DefaultMaxRelated (20).
	MaxRelated int

	// Timeout bounds each attempt. Zero means DefaultExtractionTimeout (2
	// minutes).
	Timeout time.Duration

	agent *agent.Agent
}

func (x *Extraction) check() error {
	if x.Models == nil || x.Model == "" {
		return errors.New("memory: Extraction needs Models and Model")
	}
	if x.MaxRelated < 0 || x.Timeout < 0 {
		return errors.New("memory: a negative limit in Extraction")
	}
	var gc genai.GenerateContentConfig
	if x.GenerateConfig != nil {
		gc = *x.GenerateConfig
	}
	instruction := x.Instruction
	if instruction == "" {
		instruction = DefaultExtractionInstruction
	}
	gc.SystemInstruction = genai.NewContentFromText(instruction, genai.RoleUser)
	a, err := agent.New(agent.Config{Models: x.Models, Model: x.Model, Name: "memory_extraction", GenerateConfig: &gc, MaxTurns: 1})
	if err != nil {
		return fmt.Errorf("memory: Extraction: %w", err)
	}
	x.agent = a
	return nil
}

// extractJob is a conversation to extract facts from.
type extractJob struct {
	thread   string
	messages []Message // the new messages, in order
}

// extracted is what the model answers.
type extracted struct {
	Facts []extractedFact `json:"facts" jsonschema:"the facts worth remembering, none when there are none"`
}

type extractedFact struct {
	Text     string   `json:"text" jsonschema:"the fact, one sentence that makes sense on its own"`
	Message  int      `json:"message" jsonschema:"the index of the message it comes from"`
	Replaces []string `json:"replaces,omitempty" jsonschema:"the ids of the remembered facts it contradicts or updates"`
}

// extract runs one attempt of an extraction job.
func (s *Service) extract(ctx context.Context, j *job, u *userState, attempt int) error {
	x := s.cfg.Extraction
	ctx, cancel := context.WithTimeout(ctx, orDefault(x.Timeout, DefaultExtractionTimeout))
	defer cancel()
	start := time.Now()
	var transcript strings.Builder
	for _, m := range j.ext.messages {
		fmt.Fprintf(&transcript, "[%d] %s (%s): %s\n", m.Index, m.Author, m.Time.Format("2 January 2006"), m.Text)
	}
	related, err := s.related(ctx, j.user, transcript.String(), orDefault(x.MaxRelated, DefaultMaxRelated))
	if err != nil {
		return err
	}
	var prompt strings.Builder
	prompt.WriteString("Facts remembered about the user:\n")
	if len(related) == 0 {
		prompt.WriteString("(none)\n")
	}
	shown := map[string]bool{}
	for _, r := range related {
		shown[r.ID] = true
		fmt.Fprintf(&prompt, "- %s: %s\n", r.ID, r.Text)
	}
	prompt.WriteString("\nThe new part of the conversation:\n")
	prompt.WriteString(transcript.String())
	out, res, err := agent.RunTyped[extracted](ctx, x.agent, []*genai.Content{genai.NewContentFromText(prompt.String(), genai.RoleUser)})
	var usage agent.Usage
	if res != nil {
		usage = res.Usage
	}
	if err != nil {
		return &extractError{err: err, usage: usage}
	}
	byIndex := map[int]Message{}
	for _, m := range j.ext.messages {
		byIndex[m.Index] = m
	}
	last := j.ext.messages[len(j.ext.messages)-1]
	var add []Record
	var remove []string
	for _, f := range out.Facts {
		text := strings.TrimSpace(cut(clean(f.Text), s.cfg.MaxMemoryBytes))
		if text == "" {
			continue
		}
		from, ok := byIndex[f.Message]
		if !ok {
			from = last
		}
		author := ""
		if from.Author != "model" {
			author = from.Author
		}
		add = append(add, Record{Memory: Memory{ID: newID(), User: j.user, Kind: KindFact, Text: text, Author: author,
			Thread: j.ext.thread, Message: from.Index, Time: from.Time}, Terms: Analyze(text)})
		for _, id := range f.Replaces {
			if shown[id] && !slices.Contains(remove, id) {
				remove = append(remove, id)
			}
		}
	}
	if len(add) > 0 || len(remove) > 0 {
		if err := s.write(j, u, func() error { return s.store.Replace(ctx, j.user, add, remove) }); err != nil {
			return &extractError{err: err, usage: usage}
		}
	}
	memories := make([]Memory, len(add))
	for i, r := range add {
		memories[i] = r.Memory
	}
	s.observe(j.ctx, &Event{Kind: EventExtract, User: j.user, Thread: j.ext.thread, Memories: memories, Removed: remove,
		Usage: usage, Attempt: attempt, Start: start, Duration: time.Since(start)})
	if len(add) > 0 && s.cfg.Embedder != nil {
		s.enqueue(j.ctx, jobEmbed, j.user, nil)
	}
	return nil
}

// extractError is a failed attempt, with the tokens it took.
type extractError struct {
	err   error
	usage agent.Usage
}

func (e *extractError) Error() string { return e.err.Error() }
func (e *extractError) Unwrap() error { return e.err }

// related returns the remembered facts of user that text's words find,
// at most n.
func (s *Service) related(ctx context.Context, user, text string, n int) ([]Result, error) {
	res, _, err := s.lexical(ctx, user, newQuery(cut(text, s.cfg.MaxQueryBytes), s.now()), &SearchOptions{Limit: n, Kinds: []Kind{KindFact}})
	return res, err
}
