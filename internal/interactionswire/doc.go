// Package interactionswire holds the wire shapes of Gemini's Interactions
// API (POST /{version}/interactions and its stream) and the one
// translation between them and genai's generateContent types, which
// package geminiinteractions (the client side) and internal/fake (the
// server side) share: a conversation's contents become the steps the API
// takes, and the steps the API sends become a model content.
//
// It depends on genai's types and the standard library only, never on
// genai/interactions: the SDK's generated types lose what a client must
// keep (fields they do not model, and a function result's object form,
// which decodes to an empty struct), so the steps travel as this package's
// JSON.
//
// # Contents and steps
//
// A user content becomes user_input steps (text, images, audio, video and
// documents, inline or by URI) and function_result steps, in the order of
// its parts. A model content becomes thought, model_output, function_call
// and built-in tool steps (google_search_call and _result, code execution,
// URL context, file search, Google Maps…):
//
//   - a thought step is a run of thought parts up to the first one that
//     carries a signature, whose text is the step's summary; a thought step
//     becomes one thought part with its signature;
//   - a run of non-thought text and media parts is one model_output step,
//     its adjacent texts joined: the API streams text in pieces and the loop
//     joins them, so the two forms of one answer make the same step;
//   - a non-thought part that carries a signature is followed by a thought
//     step with that signature: it is the form the loop's stream merging
//     gives a thought step without summary that follows text, and the form
//     generateContent gives signatures; a function call's signature goes
//     before it, as the API signs calls (function_call steps carry none);
//   - a built-in tool step becomes the part generateContent uses for it
//     (toolCall or toolResponse with its id, tool type and signature;
//     executableCode or codeExecutionResult for code execution), and keeps
//     the step as received in the part's PartMetadata under [StepKey] (its
//     JSON, a string, in [Canonical] form), from which it goes back exactly
//     as it came: the same JSON value, whichever way it was encoded.
//
// Thought signatures and continuation tokens are opaque strings on this
// API; in genai's types they are the string's bytes, unchanged.
package interactionswire
