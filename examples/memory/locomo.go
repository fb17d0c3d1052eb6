package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
)

// A LoCoMo conversation, as its JSON file holds it (see
// ../shared/locomo/README.md): sessions of dialog turns with their dates,
// and questions annotated with the turns that hold their evidence.
type conversation struct {
	name     string
	speakers [2]string
	sessions []sitting
	qa       []question
}

// sitting is a session of a LoCoMo conversation (a word that package
// session has).
type sitting struct {
	n     int
	date  time.Time
	turns []turn
}

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

type question struct {
	Question string          `json:"question"`
	Evidence []string        `json:"evidence"`
	Category int             `json:"category"`
	Answer   json.RawMessage `json:"answer"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// loadConversation reads a LoCoMo conversation file.
func loadConversation(path string) (*conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &conversation{name: filepath.Base(path)}
	for i, k := range []string{"speaker_a", "speaker_b"} {
		json.Unmarshal(raw[k], &c.speakers[i])
	}
	for k, v := range raw {
		m := sessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		s := sitting{n: n}
		if err := json.Unmarshal(v, &s.turns); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, k, err)
		}
		var date string
		json.Unmarshal(raw[k+"_date_time"], &date)
		if s.date, err = time.Parse("3:04 pm on 2 January, 2006", date); err != nil {
			return nil, fmt.Errorf("%s: %s_date_time: %w", path, k, err)
		}
		c.sessions = append(c.sessions, s)
	}
	slices.SortFunc(c.sessions, func(a, b sitting) int { return a.n - b.n })
	if err := json.Unmarshal(raw["qa"], &c.qa); err != nil {
		return nil, fmt.Errorf("%s: qa: %w", path, err)
	}
	if len(c.sessions) == 0 {
		return nil, fmt.Errorf("%s: no sessions: not a LoCoMo conversation", path)
	}
	return c, nil
}

// evidence returns a question's evidence turn ids, cleaned: some carry
// stray spaces, or two ids in one string ("D8:6; D9:17").
func evidence(q question) []string {
	var out []string
	for _, e := range q.Evidence {
		out = append(out, strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })...)
	}
	return out
}

// turnText is what a dialog turn is remembered as: its text, and the
// caption of the photo it shared.
func turnText(t turn) string {
	if t.Caption == "" {
		return t.Text
	}
	return t.Text + " [shares " + t.Caption + "]"
}

// recall is a file's figures.
type recall struct {
	questions int
	at5, at10 float64 // sums over questions
}

// runLoCoMo ingests each conversation of files as one user's memories,
// each session a thread and each turn a message of it, asks each question
// of categories 1 to 4 that has evidence, and prints the recall at 5 and
// 10 of each file and of all: the share of a question's evidence turns
// among the first k results, averaged over questions.
func runLoCoMo(ctx context.Context, w io.Writer, files []string, cfg memory.Config) error {
	var total recall
	for _, f := range files {
		c, err := loadConversation(f)
		if err != nil {
			return err
		}
		r, err := evaluate(ctx, c, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		turns := 0
		for _, s := range c.sessions {
			turns += len(s.turns)
		}
		fmt.Fprintf(w, "%s: sessions=%d turns=%d recall@5=%.3f recall@10=%.3f questions=%d\n",
			c.name, len(c.sessions), turns, r.at5/float64(max(r.questions, 1)), r.at10/float64(max(r.questions, 1)), r.questions)
		total.questions += r.questions
		total.at5 += r.at5
		total.at10 += r.at10
	}
	n := float64(max(total.questions, 1))
	fmt.Fprintf(w, "recall@5=%.3f recall@10=%.3f questions=%d\n", total.at5/n, total.at10/n, total.questions)
	return nil
}

func evaluate(ctx context.Context, c *conversation, cfg memory.Config) (recall, error) {
	svc, err := memory.New(cfg)
	if err != nil {
		return recall{}, err
	}
	defer svc.Close(ctx)
	user := "locomo-" + strings.TrimSuffix(c.name, filepath.Ext(c.name))
	if err := svc.ForgetUser(ctx, user); err != nil { // what an earlier run left in -db
		return recall{}, err
	}
	ids := map[string]string{} // thread and index -> dia_id
	for _, s := range c.sessions {
		thread := fmt.Sprintf("session_%d", s.n)
		msgs := make([]memory.Message, len(s.turns))
		for i, t := range s.turns {
			msgs[i] = memory.Message{Thread: thread, Index: i, Author: t.Speaker, Text: turnText(t), Time: s.date}
			ids[thread+"\x00"+strconv.Itoa(i)] = strings.TrimSpace(t.DiaID)
		}
		if _, err := svc.IngestMessages(ctx, user, msgs); err != nil {
			return recall{}, err
		}
	}
	if err := svc.Wait(ctx); err != nil {
		return recall{}, err
	}
	var r recall
	for _, q := range c.qa {
		ev := evidence(q)
		if q.Category < 1 || q.Category > 4 || len(ev) == 0 {
			continue
		}
		res, err := svc.Search(ctx, user, q.Question, &memory.SearchOptions{Limit: 10})
		if err != nil {
			return recall{}, err
		}
		var top []string
		for _, m := range res {
			top = append(top, ids[m.Thread+"\x00"+strconv.Itoa(m.Message)])
		}
		r.questions++
		r.at5 += share(ev, top[:min(5, len(top))])
		r.at10 += share(ev, top)
	}
	return r, nil
}

// share returns the share of ev found in top.
func share(ev, top []string) float64 {
	found := 0
	for _, e := range ev {
		if slices.Contains(top, e) {
			found++
		}
	}
	return float64(found) / float64(len(ev))
}
