// Package offline is a stand-in for Gemini that needs no API key and no
// network: the offline demo model the repository's examples run on, served
// on a loopback port to the real genai client, so that a first program
// runs anywhere before a key is at hand.
//
// The model is a small script, not a language model. It answers questions
// about the weather in a city ("What's the weather in Paris and Tokyo?"),
// the time in a time zone ("what time is it in UTC"), arithmetic ("what is
// (12+7)*3") and primes ("primes below 500 million?") by calling the tools
// the request declares with those names (get_weather, current_time,
// calculate and count_primes, with a "city", "timezone", "expression" and
// "below" parameter, as the examples define them), and then sums up the
// results they return; a chart ("Chart the temperatures in Paris and
// Oslo") calls weather_chart with their "cities", the tool of
// examples/server that makes a chart and its data as files. Anything
// else gets a short answer that lists what
// it understands and says to set GEMINI_API_KEY. It answers every model
// name; a name that starts with "gemini-3" makes it behave as Gemini 3
// (call ids, thought signatures, and the check that they come back).
//
// [ClientFromEnv] is the usual entry point: the client the environment
// configures for Gemini when a key (or Vertex AI) is set, and the offline
// model's otherwise, instead of genai's long "api key is required" error:
//
//	client, err := offline.ClientFromEnv(ctx) // Gemini with GEMINI_API_KEY set, the offline model without
//	if err != nil {
//		log.Fatal(err)
//	}
//	res, err := agent.Run(ctx, agent.Config{Models: client.Models, Model: "gemini-3.5-flash", Tools: tools},
//		genai.Text("What's the weather in Paris and Tokyo?"))
//
// It answers over Gemini's Live API too, by the same rules: a client from
// [Server.LiveClient] dials it, with the model [LiveModel] (text in; text,
// or silent audio with its transcription, out).
//
// [Client] serves from one server per process, started on first use and
// never closed; tests that check for leaked goroutines start their own
// with [NewServer] and close it.
//
// The package builds on the fake Gemini server behind package geminitest;
// package agent does not import it.
package offline
