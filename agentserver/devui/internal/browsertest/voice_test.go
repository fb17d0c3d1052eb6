package browsertest

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// liveModel is a Live model of the fake's.
const liveModel = "gemini-2.5-flash-native-audio-preview-12-2025"

// speech returns the path of a WAV of espeak-ng saying text (16-bit PCM,
// mono, 22050 Hz), or skips the test without espeak-ng (fails it when
// TOOLNEXUS_BROWSER_REQUIRED=1).
func speech(t *testing.T, text string) string {
	p, err := exec.LookPath("espeak-ng")
	if err != nil {
		if os.Getenv("TOOLNEXUS_BROWSER_REQUIRED") == "1" {
			t.Fatal("no espeak-ng on PATH, and TOOLNEXUS_BROWSER_REQUIRED=1: install it (apt-get install espeak-ng)")
		}
		t.Skip("no espeak-ng on PATH (apt-get install espeak-ng)")
	}
	wav := filepath.Join(t.TempDir(), "speech.wav")
	if out, err := exec.Command(p, "-v", "en-us", "-s", "150", "-w", wav, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v\n%s", err, out)
	}
	return wav
}

// tone returns n samples of a 440 Hz tone at 24 kHz, as 16-bit PCM: the
// model's speech.
func tone(n int) []byte {
	out := make([]byte, 2*n)
	for i := range n {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
		binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
	}
	return out
}

// voiced counts the samples of 16 kHz PCM the model heard that are not
// near silence, over every audio message.
func voiced(m *fake.Server) (samples, loud int) {
	for _, msg := range m.LiveMessages() {
		if ri := msg.RealtimeInput; ri != nil && ri.Audio != nil {
			d := ri.Audio.Data
			for i := 0; i+1 < len(d); i += 2 {
				samples++
				if v := int16(binary.LittleEndian.Uint16(d[i:])); v > 1000 || v < -1000 {
					loud++
				}
			}
		}
	}
	return samples, loud
}

func TestVoiceMode(t *testing.T) {
	chromium(t)
	wav := speech(t, "What is the weather in Paris?")
	model := fake.NewServer()
	client, err := genai.NewClient(t.Context(), model.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (map[string]any, error) {
		return map[string]any{"city": in.City, "sky": "sunny"}, nil
	})
	a, err := agent.New(agent.Config{Name: "voice demo", Models: client.Models, Model: liveModel, Tools: toolset.MustNew(weather)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	lh, err := live.New(srv, live.Config{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(devui.Handler(srv, &devui.Options{Live: lh}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lh.Close(ctx); err != nil {
			t.Errorf("live Close: %v", err)
		}
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		hs.Close()
		model.Close()
		for _, m := range model.LiveRejections() {
			t.Errorf("the fake refused live message #%d (rule %s): %d %s", m.Seq, m.Rejection.Rule, m.Rejection.Code, m.Rejection.Reason)
		}
	})
	// The microphone off (audioStreamEnd), the model has heard the
	// question: it calls get_weather, then says the answer, 0.6 s of it.
	answer := tone(14400)
	model.EnqueueLive(
		fake.LiveMessages(fake.LiveInputTranscription("What is the weather in Paris?", true),
			fake.LiveToolCall(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}})),
		fake.LiveAudio("It is sunny in Paris.", answer[:9600], answer[9600:19200], answer[19200:]))

	ctx := browser(t, chromedp.Flag("use-fake-device-for-media-stream", true), chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav+"%noloop"), chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
	run(t, ctx, "opening the page", chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#mic")))
	shot(t, ctx, "voice-ready")
	run(t, ctx, "turning the microphone on", chromedp.Click(chromedp.CSS("#mic")))
	until(t, ctx, "the microphone on", `document.querySelector('#mic').dataset.state === 'listening'`)

	// The speech reaches the model: wait until it has heard a quarter of a
	// second of voice (the whole question gives about 10000 samples over
	// ±1000 here).
	deadline := time.Now().Add(hang)
	for {
		samples, loud := voiced(model)
		if loud >= 4000 {
			t.Logf("the model heard %d samples (%.1f s), %d of them voiced", samples, float64(samples)/16000, loud)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the model heard %d samples, %d voiced: the speech did not reach it", samples, loud)
		}
		time.Sleep(20 * time.Millisecond)
	}
	run(t, ctx, "turning the microphone off", chromedp.Click(chromedp.CSS("#mic")))

	until(t, ctx, "the user's transcript", `document.querySelector('.msg.user.voice')?.textContent === 'What is the weather in Paris?'`)
	until(t, ctx, "the tool card, done", `document.querySelector('.msg.assistant.voice .tool[data-name=get_weather]')?.dataset.state === 'done'`)
	until(t, ctx, "the answer's transcript", `document.querySelector('.msg.assistant.voice > .body > .text')?.textContent === 'It is sunny in Paris.'`)
	until(t, ctx, "the turn's end", `document.querySelector('.msg.assistant.voice')?.dataset.done === '1'`)
	// Every sample of the answer is played (the tone has a few zero
	// crossings that land on 0 exactly: the meter does not count those).
	until(t, ctx, "the answer played", `+(document.querySelector('#mic').dataset.played || 0) >= 14000`)
	var card struct{ Args, Output string }
	eval(t, ctx, `(() => { const c = document.querySelector('.msg.assistant.voice .tool');
		return {args: c.querySelector('.args').textContent, output: c.querySelector('.output').textContent}; })()`, &card)
	if !strings.Contains(card.Args, `"Paris"`) || !strings.Contains(card.Output, "sunny") {
		t.Errorf("the tool card: %+v", card)
	}
	var played int
	eval(t, ctx, `+document.querySelector('#mic').dataset.played`, &played)
	if played > 14400 {
		t.Errorf("the page played %d samples of the 14400 sent", played)
	}
	shot(t, ctx, "voice-answered")

	// The transcript is the thread's.
	h, err := srv.History(t.Context(), "local", threadOf(t, ctx))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Parts[0].Text != "What is the weather in Paris?" || h[1].Parts[0].Text != "It is sunny in Paris." {
		t.Errorf("the thread holds %d contents: %v", len(h), h)
	}
}

// threadOf returns the thread the page's chat is on.
func threadOf(t *testing.T, ctx context.Context) string {
	var thread string
	eval(t, ctx, `document.querySelector('#chat-thread').textContent`, &thread)
	return thread
}
