package geminitest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// A live session through genai's Live client: the model asks for a tool,
// the program answers by id, the model speaks (audio with its
// transcription); then the server asks the client to go away, and the
// client resumes the session on a new connection with its handle.
func Example_live() {
	srv := geminitest.NewServer() // in a test: srv := geminitest.Start(t)
	defer srv.Close()
	srv.EnqueueLive(
		geminitest.LiveCalls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.LiveMessages(geminitest.LiveResumptionUpdate(), geminitest.LiveModelAudio(make([]byte, 4800)),
			geminitest.LiveOutputTranscription("Sunny in Paris.", true), geminitest.LiveGenerationComplete(),
			geminitest.LiveTurnComplete(), geminitest.LiveGoAway(0)),
		geminitest.LiveText("You are welcome."),
	)
	client, err := genai.NewClient(context.Background(), srv.LiveClientConfig()) // or srv.LiveVertexClientConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	config := &genai.LiveConnectConfig{
		ResponseModalities:       []genai.Modality{genai.ModalityAudio},
		OutputAudioTranscription: &genai.AudioTranscriptionConfig{},
		SessionResumption:        &genai.SessionResumptionConfig{},
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather",
			Description: "Current weather for a city"}}}},
	}
	sess, err := client.Live.Connect(context.Background(), "gemini-2.5-flash-native-audio-preview-12-2025", config)
	if err != nil {
		fmt.Println(err)
		return
	}
	sess.Receive() // setupComplete
	sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: "Weather in Paris?"})

	var handle string
	for done := false; !done; {
		msg, err := sess.Receive()
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case msg.ToolCall != nil:
			call := msg.ToolCall.FunctionCalls[0]
			fmt.Printf("call %s(%v) id %s\n", call.Name, call.Args["city"], call.ID)
			sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{
				{ID: call.ID, Name: call.Name, Response: map[string]any{"output": "sunny"}}}})
		case msg.SessionResumptionUpdate != nil:
			handle = msg.SessionResumptionUpdate.NewHandle
		case msg.ServerContent != nil && msg.ServerContent.ModelTurn != nil:
			fmt.Println("audio bytes:", len(msg.ServerContent.ModelTurn.Parts[0].InlineData.Data))
		case msg.ServerContent != nil && msg.ServerContent.OutputTranscription != nil:
			fmt.Println("said:", msg.ServerContent.OutputTranscription.Text)
		case msg.GoAway != nil:
			fmt.Println("go away; resuming with", handle)
			done = true
		}
	}
	sess.Close()

	config.SessionResumption.Handle = handle
	sess, err = client.Live.Connect(context.Background(), "gemini-2.5-flash-native-audio-preview-12-2025", config)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	sess.Receive() // setupComplete
	sess.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText("Thanks!", genai.RoleUser)}})
	msg, _ := sess.Receive()
	fmt.Println("text:", msg.ServerContent.ModelTurn.Parts[0].Text)

	// A handle the server never issued is refused as the service refuses it.
	config.SessionResumption.Handle = "stale"
	_, err = client.Live.Connect(context.Background(), "gemini-2.5-flash-native-audio-preview-12-2025", config)
	var closed *websocket.CloseError
	if errors.As(err, &closed) {
		fmt.Println("refused:", closed.Code, closed.Text)
	}

	msgs := srv.LiveMessages()
	fmt.Println("one session:", msgs[0].Session == msgs[len(msgs)-2].Session, "connections:", msgs[len(msgs)-1].Conn)
	// Output:
	// call get_weather(Paris) id fc-2
	// audio bytes: 4800
	// said: Sunny in Paris.
	// go away; resuming with live-handle-3
	// text: You are welcome.
	// refused: 1008 BidiGenerateContent session not found
	// one session: true connections: 3
}
