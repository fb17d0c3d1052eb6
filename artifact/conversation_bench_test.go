package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// BenchmarkConversationBytes sends a 20-turn conversation whose tool makes
// a new 500 KB image each turn (two model calls a turn: the call, then the
// answer), and reports the bytes each model call sends: with the images
// inline in the history, as without a Keeper ("inline"); with a Keeper
// that uploads them with the Files API ("artifacts"); and with a Keeper
// that has no Uploader, as on Vertex AI ("artifacts-no-upload").
//
//	go test -run '^$' -bench ConversationBytes -benchtime 1x ./artifact/
func BenchmarkConversationBytes(b *testing.B) {
	const turns, imageBytes = 20, 500 << 10
	for _, mode := range []string{"inline", "artifacts", "artifacts-no-upload"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				srv := geminitest.NewServer()
				client := srv.Client()
				n := 0
				draw := toolset.MustFunc("draw", "Draws an image.", func(ctx context.Context, _ struct{}) (toolset.MediaOutput, error) {
					n++
					img := make([]byte, imageBytes)
					copy(img, "\x89PNG\r\n\x1a\n")
					r := rand.New(rand.NewPCG(uint64(n), 0))
					for i := 8; i < len(img); i += 8 {
						v := r.Uint64()
						for j := 0; j < 8 && i+j < len(img); j++ {
							img[i+j] = byte(v >> (8 * j))
						}
					}
					return toolset.MediaOutput{Output: "drawn", Media: []toolset.Media{{MIMEType: "image/png", Data: img, Name: fmt.Sprintf("image-%d.png", n)}}}, nil
				})
				cfg := agent.Config{Models: client.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(draw)}
				switch mode {
				case "artifacts":
					cfg.Files = artifact.NewKeeper(artifact.NewMemory(1<<30), artifact.KeeperOptions{Uploader: client.Files})
				case "artifacts-no-upload":
					cfg.Files = artifact.NewKeeper(artifact.NewMemory(1<<30), artifact.KeeperOptions{})
				}
				a, err := agent.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				ctx := artifact.WithScope(context.Background(), "bench", "t")
				var history []*genai.Content
				for turn := range turns {
					srv.Enqueue(geminitest.Calls(geminitest.Call("draw", nil)), geminitest.Text("Here it is."))
					res, err := a.Run(ctx, append(history, genai.NewContentFromText(fmt.Sprintf("Draw image %d.", turn), genai.RoleUser)))
					if err != nil {
						b.Fatal(err)
					}
					history = res.History
				}
				var calls, total, last int64
				for _, r := range srv.Requests() {
					if r.Method == geminitest.MethodGenerateContent || r.Method == geminitest.MethodStreamGenerateContent {
						calls++
						total += int64(len(r.Body))
						last = int64(len(r.Body))
					}
				}
				var uploaded int64
				for _, f := range srv.Files() {
					uploaded += f.Size
				}
				stored, _ := json.Marshal(history)
				srv.Close()
				b.ReportMetric(float64(len(stored))/1e3, "history-kB")
				b.ReportMetric(float64(calls), "calls")
				b.ReportMetric(float64(last)/1e3, "last-call-kB")
				b.ReportMetric(float64(total)/float64(calls)/1e3, "mean-call-kB")
				b.ReportMetric(float64(total+uploaded)/1e6, "total-MB")
				b.ReportMetric(float64(uploaded)/1e6, "uploaded-MB")
			}
		})
	}
}

// BenchmarkInlineVsUpload measures, against the fake on loopback, what
// the Keeper's inline limit weighs: a model call that sends a file of
// each size inline ("inline"), one upload of it with the Files API
// ("upload": the start and its one chunk), and a model call that names
// the upload instead ("reference"). An upload pays off once the calls
// that name it, instead of sending the bytes, save more than it costs.
//
//	go test -run '^$' -bench InlineVsUpload ./artifact/
func BenchmarkInlineVsUpload(b *testing.B) {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*geminitest.Request) *geminitest.Reply { return geminitest.Text("ok") })
	client := srv.Client()
	ctx := context.Background()
	for _, size := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		data := make([]byte, size)
		copy(data, "\x89PNG\r\n\x1a\n")
		for i := 8; i < size; i++ {
			data[i] = byte(i * 31)
		}
		ask := func(b *testing.B, part *genai.Part) {
			if _, err := client.Models.GenerateContent(ctx, "gemini-3-flash-preview",
				[]*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{part, {Text: "What is it?"}}}}, nil); err != nil {
				b.Fatal(err)
			}
		}
		name := fmt.Sprintf("%dKB", size>>10)
		b.Run("inline/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				ask(b, &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: data}})
			}
		})
		var uri string
		b.Run("upload/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				f, err := client.Files.Upload(ctx, bytes.NewReader(data), &genai.UploadFileConfig{MIMEType: "image/png"})
				if err != nil {
					b.Fatal(err)
				}
				uri = f.URI
			}
		})
		b.Run("reference/"+name, func(b *testing.B) {
			for b.Loop() {
				ask(b, &genai.Part{FileData: &genai.FileData{FileURI: uri, MIMEType: "image/png"}})
			}
		})
	}
}
