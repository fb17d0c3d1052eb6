package fake

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"google.golang.org/genai"
)

// rules are the checks every request passes before it is answered, in the
// order they run. The first rule that fails decides the answer: the request
// is rejected with that rule's error, which is recorded in a [Rejection]
// named after the rule. Earlier rules parse the body for later ones.
//
// The fake must refuse exactly what the real API refuses, no more: a rule
// stricter than the API breaks a correct client's tests. So each rule says
// what backs it. verified cites where the API was seen refusing it (a public
// capture by its issue, a document by its URL) or genai's source
// (google.golang.org/genai@v1.77.0, file:line); assumed says what is
// believed without such a source. An error text is the API's own where the
// rule says "text verified"; otherwise it follows the API's style.
//
// To add a rule, write its check function and add one entry here; give it
// a passing and a failing case in ruleCases (validate_test.go), which
// TestRules requires. The Interactions API's rules are interactionRules
// (interactions_rules.go); the Live API's, liveRules (live_rules.go).
var rules = []rule{
	{name: "auth", check: checkAuth,
		verified: "Gemini API: 403 PERMISSION_DENIED without a key or token, text verified " +
			"(PublicAffairs/openai-gemini#92, googleapis/js-genai#898; in the real traffic, the langchaingo traces " +
			"langchaingo-9301483e401e, -f1e3544f41e8 and -f4dd5563eb26, June and August 2025); an OAuth bearer token " +
			"instead of a key is documented (https://ai.google.dev/gemini-api/docs/oauth); a key in the key query " +
			"parameter is accepted (the traffic's openinference cassette TestLM.test_gemini.yaml, October 2024). " +
			"Vertex AI: 401 UNAUTHENTICATED without credentials, text verified (GoogleCloudPlatform/generative-ai#454) " +
			"with the ErrorInfo CREDENTIALS_MISSING detail of a2aproject/a2a-samples#43 (and of the traffic's " +
			"opentelemetry-python-contrib cassette test_tool_events_no_content.yaml, September 2025, on v1). A " +
			"malformed Authorization header: 401, text verified (cnpack/cnwizards#215, songquanpeng/one-api#515).",
		assumed: "An API key alone on a Vertex AI project route gets the 401 that a2aproject/a2a-samples#43 " +
			"shows for a key that is not a Vertex AI key; any non-empty key or token is valid (the traffic's 400 " +
			"API_KEY_INVALID, opentelemetry-python-contrib's test_gemini.yaml, and 401 ACCESS_TOKEN_TYPE_UNSUPPORTED, " +
			"pydantic-ai's test_google_vertexai_image_generation.yaml, answer keys and tokens the API did not take)."},
	{name: "json-syntax", check: checkJSONSyntax,
		verified: "the API parses the body as JSON and answers 400 INVALID_ARGUMENT \"Invalid JSON payload " +
			"received.\" when it cannot (the prefix of every parse error, e.g. ax-llm/ax#293).",
		assumed: "the text after the prefix (\"Unexpected token.\", the line and a caret) and that an empty " +
			"body reads as {}."},
	{name: "function-response-object", check: checkResponseObject,
		verified: "a functionResponse.response that is a list: text verified (danny-avila/LibreChat#5525, " +
			"vercel/ai#3589); a response that is absent is accepted (issue 13: a Gemini 3.5 conversation answered " +
			"200, the real traffic's trace adk-go-283a2401f69a, June 2026).",
		assumed: "a string, number or bool response, answered in the proto JSON form for a Struct (\"Invalid " +
			"value at '…' (type.googleapis.com/google.protobuf.Struct), …\", the form gemini-cli#4120 shows for " +
			"a scalar)."},
	{name: "json-fields", check: checkJSONFields,
		verified: "an unknown field at any level is refused, text verified (ax-llm/ax#293, " +
			"glowingjade/obsidian-smart-composer#455; the same for $defs, const, exclusiveMinimum… in " +
			"langchain-ai/langchainjs#7758; in the real traffic, additionalProperties in parameters, pydantic-ai's " +
			"test_image_as_binary_content_tool_response.yaml, November 2025, and a part's mediaResolution on v1beta, " +
			"see fields.go); a value of the wrong JSON type, text verified (google-gemini/gemini-cli#4120: numbers " +
			"in a schema's enum). Values are read as proto JSON reads them (https://protobuf.dev/programming-" +
			"guides/json/): names in camelCase or snake_case (the traffic's pydantic-ai Vertex AI cassettes send " +
			"function_call and thought_signature, answered 200), enums by name or number (the legacy Go SDK sends " +
			"numbers, cloud.google.com/go/ai generative_client.go:702; answered 200 in the traffic's langchaingo " +
			"traces, e.g. langchaingo-a0c4b1ed20c0, August 2025, with the request's model field, and to Vertex AI " +
			"in opentelemetry-python-contrib's test_function_call_choice cassettes), integers as numbers or " +
			"strings, bytes in standard or URL-safe base64. A lone object for a repeated message field is its one " +
			"element, named without an index ('tools.function_declarations[0].parameters'): the traffic holds 45 " +
			"requests whose tools is one object, from pydantic-ai's Gemini model, answered 200 from March 2025 to " +
			"February 2026 (e.g. test_gemini_tool_output.yaml, test_gemini_drop_exclusive_maximum.yaml), and the " +
			"refusal of test_image_as_binary_content_tool_response.yaml names that path; Google's REST examples " +
			"send \"contents\": {\"parts\": {\"text\": …}} (ai.google.dev/gemini-api/docs/function-calling). " +
			"Lowercase schema types are accepted (google-gemini/cookbook Function_calling_REST.ipynb). The fields " +
			"one backend or version lacks are listed in fields.go with their source: function-call ids are on both " +
			"backends (the traffic's Vertex AI requests, January to July 2026).",
		assumed: "the case of other enum names is ignored too; enums other than a schema's type and the " +
			"function-calling mode are not checked against their values; every repeated message field takes a " +
			"lone object, on both backends (seen for tools in the traffic, for contents and parts in Google's " +
			"examples), and a lone scalar for a repeated scalar field is refused."},
	// A request that names a cache (caching.md §5, §6; caches.go). The
	// last of these puts the cache's system instruction, tools, tool
	// config and contents into the request: the rules after them check the
	// whole prompt, as the API reads it.
	{name: "cached-content-exclusive", check: checkCachedContentExclusive,
		verified: "a request with cachedContent that sets systemInstruction, tools or toolConfig gets 400 " +
			"INVALID_ARGUMENT, text verified: the Gemini API's (vercel/ai#3333, google-gemini/deprecated-generative-ai-" +
			"python#664, langchain-ai/langchain-google#978, openclaw/openclaw#84919 and #89398, 2024-10 to 2026-06), " +
			"Vertex AI's (BerriAI/litellm#26014, vertex_ai/gemini-3.1-pro-preview, 2026-04; pydantic/pydantic-ai#5671; " +
			"googleapis/python-genai#348). A cachedContent alone beside contents and generationConfig was answered 200 " +
			"(the real traffic's pydantic-ai cassette test_google_model_cached_content.yaml).",
		assumed: "each backend answers with its own text (instructor#2580, 2026-08, saw Vertex AI's from the Gemini " +
			"API); this rule runs before the cache is looked up."},
	{name: "cached-content-found", check: checkCachedContentFound,
		verified: "a cache that does not exist, expired or was deleted: the Gemini API answers 403 PERMISSION_DENIED " +
			"\"CachedContent not found (or permission denied)\", Vertex AI 400 FAILED_PRECONDITION \"Invalid resource " +
			"state for cache content {numeric id}.\", texts verified (caching.md §6: Wei-Shaw/sub2api's Gemini service " +
			"test, measured 2026-10).",
		assumed: "a cache of another backend, project or location is not found; caches are not scoped to a key or " +
			"token (any credentials of the backend reach one). Earlier Vertex AI answered an expired cache 400 " +
			"INVALID_ARGUMENT \"Cache content {id} is expired\" (clawvisor/clawvisor#360, 2026-05): the newer text wins."},
	{name: "cached-content-model", check: checkCachedContentModel,
		verified: "a cache of another model: 400 INVALID_ARGUMENT \"Model used by GenerateContent request (models/X) " +
			"and CachedContent (models/Y) has to be the same.\", text verified from reports of the Gemini API, 2025 and " +
			"2026 (caching.md §6; in no Google document). The cache's contents come before the request's and its " +
			"system instruction, tools and tool config are the prompt's (ai.google.dev/api/caching); usage counts " +
			"the cache in promptTokenCount and as cachedContentTokenCount, with cacheTokensDetails (the real " +
			"traffic's test_google_model_cached_content.yaml: 3512 cached of 3520).",
		assumed: "the same status and text on Vertex AI, with the models named models/X."},
	{name: "contents-required", check: checkContentsRequired,
		verified: "text verified (langchain-ai/langchain#33940)."},
	{name: "role", check: checkRoles,
		verified: "\"system\" and \"assistant\" are refused, text verified (the-open-agent/openagent#1666, " +
			"MoonLadderStudios/MoonMind#8), and so is any other role on Vertex AI, unary and streamed (the real " +
			"traffic's opentelemetry-python-contrib cassettes test_generate_content_invalid_role.yaml, January and " +
			"August 2025, and test_stream_generate_content_invalid_role.yaml, March 2025, v1); an unset role is " +
			"accepted (the API's own curl example, snailyp/gemini-balance#172); \"function\" is accepted: Google's " +
			"legacy JS SDK sends function responses only under it (@google/generative-ai VALID_PARTS_PER_ROLE); " +
			"\"tool\" was answered 200 in googleapis/python-genai#81. The system instruction's role is not " +
			"checked: \"system\" there was answered 200 (the traffic's trace langchaingo-633ad50077ef, August 2025)."},
	{name: "parts-required", check: checkPartsRequired,
		verified: "Gemini API text verified (langchain-ai/langchain-google#691); Vertex AI text verified " +
			"(firebase/firebase-android-sdk#6042)."},
	{name: "part-data", check: checkPartData,
		verified: "a part with no data, text verified (genkit-ai/genkit#3816, from a genai Go client). Vertex AI " +
			"refuses an empty text part, text verified (deepset-ai/haystack-core-integrations#1337, " +
			"Portkey-AI/gateway#462); the Gemini API accepts one again (google-gemini/deprecated-generative-ai-" +
			"python#697, fixed; in the real traffic, a user turn of only {\"text\": \"\"} in pydantic-ai's " +
			"test_google_model_empty_user_prompt.yaml, July and November 2025, user turns of " +
			"test_google_instructions_only_with_tool_calls.yaml, February 2026, and model turns of " +
			"test_google_model_empty_assistant_response.yaml, November 2025) and sends them itself (gemini-3 streams " +
			"end with {\"text\": \"\"}, captured in charmbracelet/fantasy's providertests).",
		assumed: "a part that carries only a thoughtSignature is accepted on both backends (the SDK's " +
			"omitempty makes one of the signature-only text part the API streams)."},
	{name: "tool-type", check: checkToolType,
		verified: "text verified (0xPlaygrounds/rig#588, ShishirPatil/gorilla#770). A built-in tool is a tool " +
			"type: the real traffic's googleSearch, codeExecution, urlContext, fileSearch and googleMaps tools were " +
			"answered 200 (pydantic-ai's and openinference's cassettes, May 2025 to August 2026)."},
	{name: "function-calling-config", check: checkFunctionCallingConfig,
		verified: "a function calling config with tools none of which declares a function, text verified " +
			"(musistudio/claude-code-router#1207, February 2026: a Google Search tool). One with no tools at all is " +
			"accepted: mode ANY without tools was answered 200 for gemini-2.0-flash (the real traffic's pydantic-ai " +
			"cassettes test_google_prompted_json_output.yaml, test_google_json_schema_output.yaml and their " +
			"_multiple forms, June 2025); the fake refused it until then.",
		assumed: "that other models also accept a config without tools, and refuse one whose tools declare no " +
			"function."},
	builtinRules[0], // server-side-tool-invocations (builtin.go)
	builtinRules[1], // vertex-tool-mix
	{name: "function-name", check: checkFunctionNames,
		verified: "text verified, with the limit of 64 (google-gemini/gemini-cli#6704)."},
	{name: "duplicate-function", check: checkDuplicateFunctions,
		verified: "text verified (tridz-dev/huf#341)."},
	{name: "parameters-exclusive", check: checkParametersExclusive,
		verified: "documented: parametersJsonSchema \"is mutually exclusive with parameters\" (genai types.go, " +
			"FunctionDeclaration.ParametersJsonSchema).",
		assumed: "the API refuses both with a 400; the text."},
	{name: "schema-type", check: checkSchemaTypes,
		verified: "text verified (OpenAgentsInc/openagents#857)."},
	{name: "schema-required", check: checkSchemaRequired,
		verified: "text verified (iBUHub/AIStudioToAPI#154)."},
	{name: "response-schema-with-tools", check: checkResponseSchemaWithTools,
		verified: "a JSON response (responseMimeType \"application/json\") with function declarations is refused " +
			"by Gemini 1.x and 2.5 models on the Gemini API unless function calling mode is NONE, text verified, " +
			"and Gemini 2.0 takes it (the sources are in responseschema.go). Gemini 3 accepts it: the real traffic's requests of " +
			"pydantic-ai's test_native_output_with_function_tools.yaml cassettes (gemini-3-flash-preview, April " +
			"and May 2026) and of the traces adk-go-d729fb180284 and adk-go-f9291809152a (gemini-3.5-flash, June " +
			"2026) were answered 200.",
		assumed: "what responseschema.go says of Vertex AI."},
	{name: "temperature", check: checkTemperature,
		verified: "Vertex AI refuses a temperature outside [0, 2.0001), text verified (the real traffic's " +
			"opentelemetry-python-contrib cassettes test_generate_content_invalid_temperature.yaml: 1000 for " +
			"gemini-1.5-flash-002, January 2025, and for gemini-2.5-pro, August 2025, on v1).",
		assumed: "the same on v1beta1, and how a value that is not a whole number is written in the text " +
			"(Go's shortest form, \"2.5\"); the Gemini API's range is not checked (no refusal of it was seen)."},
	{name: "penalty", check: checkPenalty,
		verified: "the Gemini API refuses a non-zero presencePenalty or frequencyPenalty for Gemini 2.5 models, " +
			"400 INVALID_ARGUMENT \"Penalty is not enabled for models/gemini-2.5-flash\", text verified " +
			"(vercel/ai#8943 for gemini-2.5-flash and gemini-2.5-pro, September 2025; BerriAI/litellm#32273, July " +
			"2026; PublicAffairs/openai-gemini#63 for gemini-2.5-flash-preview-05-20); 0 is not checked " +
			"(google-gemini/cookbook#1290). Older models take them: gemini-1.5-flash on the Gemini API (the real " +
			"traffic's pydantic-ai cassette test_gemini_model_settings.yaml, April 2025), and Vertex AI takes them " +
			"for gemini-2.5-pro (opentelemetry-python-contrib's test_generate_content_extra_params.yaml, August " +
			"2025, v1).",
		assumed: "Gemini 3 and later accept them on the Gemini API (google-gemini/cookbook#1290, July 2026, saw " +
			"\"Penalty is not enabled for this model\" on the models it tried without naming them), and so does " +
			"Vertex AI for every model."},
	// The next rules see consecutive contents of the same side (model, or
	// the user side: user, function and tool) as one turn, as genai's Chat
	// streaming history needs (see [turn]).
	{name: "function-call-placement", check: checkCallPlacement,
		verified: "text verified (discuss.ai.google.dev, topic 46213)."},
	{name: "function-response-placement", check: checkResponsePlacement,
		verified: "text verified (google-gemini/gemini-cli PR #26691)."},
	{name: "function-response-count", check: checkResponseCount,
		verified: "text verified (google-gemini/gemini-cli#16415, #4217; microsoft/vscode#299295: \"orphaned " +
			"tool_calls without matching tool resp\")."},
	{name: "function-response-id", check: checkResponseIDs,
		verified: "a response id that is none of the call turn's ids is refused (router-for-me/CLIProxyAPI#5199: " +
			"\"functionResponse.id does not match functionCall.id\", HTTP 400); a response with an id answering " +
			"calls that had none is accepted (google-gemini/gemini-cli#6974).",
		assumed: "a response without an id may answer a call with one, by name; a response whose name matches " +
			"no call of the turn is refused."},
	{name: "function-response-parts", check: checkFunctionResponseParts,
		verified: "media inside a function response (functionResponse.parts) is refused for Gemini 2.5, text " +
			"verified (google-gemini/gemini-cli#19436); Gemini 3 takes images and PDFs there (the same report, and " +
			"the Gemini 3 developer guide), and audio, video and documents too, on both backends (the real " +
			"traffic's pydantic-ai cassettes test_multimodal_tool_return_matrix_…, gemini-3-flash-preview, February " +
			"and March 2026).",
		assumed: "the Gemini API answers every model before Gemini 3 with that same text (the report came through " +
			"gemini-cli, whose error links the Vertex AI docs), and Gemini 3 accepts any MIME type."},
	{name: "file-data", check: checkFileData,
		verified: "on the Gemini API a fileData part names a Files API file by its uri, " +
			"https://generativelanguage.googleapis.com/v1beta/files/{id} (the real traffic's pydantic-ai cassettes " +
			"test_uploaded_file_input.yaml and test_multimodal_tool_return_matrix_…uploaded_file…, answered 200, top " +
			"level and, for gemini-3, in functionResponse.parts), and a file that does not exist, was deleted or expired " +
			"is refused 403 PERMISSION_DENIED \"You do not have permission to access the File {id} or it may not " +
			"exist.\", text verified (google-gemini/deprecated-generative-ai-python#692, from generateContent; " +
			"googleapis/python-genai#1218). Public http(s) URLs and gs:// objects are read too " +
			"(https://ai.google.dev/gemini-api/docs/file-input-methods, January 2026).",
		assumed: "a URI of another scheme (such as an artifact: reference sent unresolved) is refused 400 " +
			"INVALID_ARGUMENT with this text; a Files API URI of any host is looked up by its id; Vertex AI's fileData " +
			"is not checked."},
	builtinRules[2], // server-tool-parts
	{name: "thought-signature", check: checkThoughtSignatures,
		verified: "text verified (manthanabc/paws#103, nanbingxyz/5ire#405, csells/dartantic#86); the scope, the " +
			"first functionCall of each step since the last user message, is documented " +
			"(https://ai.google.dev/gemini-api/docs/thought-signatures), and parallel calls signed on the first " +
			"only were answered 200 (the real traffic's adk-go traces adk-go-719d37048025, adk-go-a53009619e20, " +
			"March 2026, and adk-go-9bdb9beb7137, June 2026). Vertex AI documents the same " +
			"(https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures).",
		assumed: "the position in the text is the 1-based index of the content holding the call; models are " +
			"recognized by the prefix gemini-3."},
	{name: "continuation-token", check: checkContinuationToken,
		verified: "the continuation of an answer the API cut is the same request, contents, tools and config, " +
			"plus the top-level continuationToken the cut hop sent (genai v1.77.0 models.go:1330, 1569, 5666; " +
			"continuation.go prepareContinuationConfig), and a stream resumes from its newest checkpoint token " +
			"(continuation.go:60-65, 304-326).",
		assumed: "the API refuses a token it did not send, and a request that differs from the one it continues, " +
			"with its generic 400 INVALID_ARGUMENT text (none of its refusals of tokens is documented or recorded)."},
	{name: "input-token-limit", check: checkInputTokens,
		verified: "with Server.SetInputTokenLimit, a prompt over the limit, counted as usageMetadata counts it, " +
			"gets 400 INVALID_ARGUMENT, text verified (google-gemini/gemini-cli#4231, a Gemini API key; the same " +
			"text in #6678 and googleapis/python-genai#2466).",
		assumed: "the fake's token estimate (about 4 bytes a token) stands in for the model's tokenizer."},
}

// cacheRules are the checks of a request to the cachedContents routes
// (caches.go), in the order they run, as [rules] are generateContent's:
// each says what backs it, and a refusal is recorded as a [Rejection]
// named after the rule. The first two are generateContent's.
var cacheRules = []rule{
	rules[0], // auth
	rules[1], // json-syntax
	{name: "json-fields", check: checkCacheFields,
		verified: "the fields of CachedContent on each backend (ai.google.dev/api/caching; Vertex AI's " +
			"projects.locations.cachedContents), read as generateContent's body is (see that rule); genai sends " +
			"kmsKeyName to Vertex AI only, as encryption_spec (caches.go:95-97, 183).",
		assumed: "an unknown field is refused as in generateContent's body; output-only fields are accepted."},
	{name: "cache-model", check: checkCacheModel,
		assumed: "a create without a model is refused, with this text (genai always sends one, caches.go:181-193)."},
	{name: "cache-expiration", check: checkCacheExpiration,
		verified: "the expiration is a oneof of ttl (a Duration) and expireTime (a Timestamp); without either a " +
			"cache lives an hour (caching.md §2, §3: ai.google.dev/gemini-api/docs/caching; Vertex AI \"60 minutes " +
			"after it's created\"); genai writes the TTL \"%.0fs\" (types_json.go:89-91).",
		assumed: "the texts for both set and for a malformed value, in proto JSON's form."},
	{name: "cache-update-mask", check: checkCacheUpdateMask,
		verified: "only the expiration is updatable (ai.google.dev/api/caching, cachedContents.patch); genai's Update " +
			"sends ttl or expireTime and no updateMask on either backend (caches.go:414-444), and Google's Vertex AI " +
			"samples use it there.",
		assumed: "Vertex AI, which documents updateMask as required, takes a patch without one; a mask naming " +
			"another field, or a patch without a mask setting one, is refused with this text."},
	{name: "cache-found", check: checkCacheExists,
		verified: "Vertex AI answers a cache that does not exist, expired or was deleted 404 NOT_FOUND \"Cached content " +
			"{id} is not found.\" on GET and PATCH, text verified (caching.md §6, measured 2026-10 per Wei-Shaw/sub2api).",
		assumed: "the same on DELETE; the Gemini API answers these routes with the 403 PERMISSION_DENIED " +
			"\"CachedContent not found (or permission denied)\" of its generateContent."},
	{name: "cache-list-page", check: checkCacheListPage,
		verified: "a list takes pageSize and pageToken (ai.google.dev/api/caching, cachedContents.list; genai " +
			"caches.go:314-330).",
		assumed: "pages of 100 by default and 1000 at most, as the Gemini API's other list methods document; the " +
			"texts for a pageSize that is not a number, in proto JSON's form, and for a token the server did not send."},
	{name: "cache-too-small", check: checkCacheSize,
		verified: "a cache below the model's minimum is refused 400 INVALID_ARGUMENT, texts verified: the Gemini " +
			"API's \"Cached content is too small. total_token_count=N, min_total_token_count=M\" " +
			"(BerriAI/litellm#17696, gemini-2.5-flash, 1024, December 2025; zyddnys/manga-image-translator#929, 4096), " +
			"Vertex AI's \"The cached content is of N tokens. The minimum token count to start caching is M.\" " +
			"(google/adk-python#5847, gemini-3.5-flash, 4096). The minimums are MinCacheTokens' (caching.md §4).",
		assumed: "the fake's token estimate stands in for the tokenizer; the newest documented minimum of each " +
			"model holds (2048 for gemini-2.5-flash, where the December 2025 error said 1024)."},
}

// rule is one check of [rules].
type rule struct {
	name  string
	check func(*input) *APIError
	// verified and assumed say what backs the rule; see [rules]. Every rule
	// has at least one of them.
	verified, assumed string
}

// input is what the rules look at. Rules fill tree and req for the rules
// after them.
type input struct {
	backend genai.Backend
	version string // the API version of the path, "v1beta"
	model   string // without "models/"
	method  Method
	project string // Vertex AI: the project of the route; "" in express mode
	creds   credentials
	body    []byte

	inputTokenLimit int // see Server.SetInputTokenLimit; 0: none

	// caches looks up a live cache by name on a backend; nil in table
	// tests without caches. The rule "cached-content-found" sets cache to
	// the one the request names; "cached-content-model" sets cachedTokens
	// to its size, and the answer's usage reports them (or the tokens of
	// an implicit hit) as cached.
	caches       func(backend genai.Backend, name string) *storedCache
	cache        *storedCache
	cachedTokens int32 // also: the size of a cache a create makes

	// A request to the cachedContents routes (cacheRules): the cache it
	// names, its query, the server's time, the decoded body of a create or
	// patch, and the expiry it sets.
	cacheName string
	query     url.Values
	now       time.Time
	cc        *wireCachedContent
	expires   time.Time
	// A list's page, set by "cache-list-page" and "files-list-page".
	pageSize, pageOffset int

	// The Files API (files.go): the request's headers, the file a route
	// names, the lookups of the live files and uploads in progress, the
	// upload a chunk is of and whether it is the last, and the metadata
	// an upload's start sends. files is also read by generateContent's
	// rule "file-data"; nil in table tests, where no file is known.
	header   http.Header
	fileID   string
	files    func(id string) *storedFile
	uploads  func(id string) *uploadSession
	upload   *uploadSession
	finalize bool
	fileMeta *wireFileMeta

	tree      *jsonValue   // the parsed body; set by "json-syntax"
	req       *wireRequest // the decoded body; set by "json-fields"
	canonical []byte       // req as canonical JSON; set by "json-fields"

	format streamFormat // how a stream is framed; read when answering

	interactions bool // an Interactions request's reply is being made (interactions_reply.go)

	// tokens looks up the continuation tokens the server sent; nil in
	// table tests, where no token is known.
	tokens func(token []byte) (*issuedToken, bool)
	// Set by "continuation-token" for a request that continues an answer:
	// the bytes of answer before it, and the rest of the stream it
	// resumes, if it resumes one from a checkpoint.
	priorOutput int
	resume      []*genai.GenerateContentResponse
}

// vertex reports whether the request came to a Vertex AI route.
func (in *input) vertex() bool {
	return in.backend == genai.BackendVertexAI
}

// check runs the rules on in and returns the first failure, or nil.
func check(in *input) *Rejection {
	for _, r := range rules {
		if err := r.check(in); err != nil {
			return &Rejection{Rule: r.name, Err: *err}
		}
	}
	return nil
}

// validate decodes and checks a request body sent for model to backend
// with credentials. It is the whole request check except routing, without
// HTTP, for the fuzz target and table tests.
func validate(backend genai.Backend, model string, body []byte) (*input, *Rejection) {
	in := &input{backend: backend, version: "v1beta", model: model, body: body, creds: credentials{apiKey: APIKey}}
	if backend == genai.BackendVertexAI {
		in.version = "v1beta1"
		in.project, in.creds = VertexProject, credentials{authorization: "Bearer " + AccessToken, token: AccessToken}
	}
	return in, check(in)
}

func invalidArgument(message string) *APIError {
	return &APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: message}
}

// requestErrors is the API's error for violations found in the decoded
// request: one line "* GenerateContentRequest.<field>: <reason>" each.
func requestErrors(violations []string) *APIError {
	if len(violations) == 0 {
		return nil
	}
	var b strings.Builder
	for _, v := range violations {
		fmt.Fprintf(&b, "* GenerateContentRequest.%s\n", v)
	}
	return invalidArgument(b.String())
}

// payloadErrors is the API's error for violations found while parsing the
// JSON: the descriptions joined by newlines, and a BadRequest detail.
func payloadErrors(violations []fieldViolation) *APIError {
	if len(violations) == 0 {
		return nil
	}
	lines := make([]string, len(violations))
	fv := make([]any, len(violations))
	for i, v := range violations {
		lines[i] = v.description
		m := map[string]any{"description": v.description}
		if v.field != "" {
			m["field"] = v.field
		}
		fv[i] = m
	}
	err := invalidArgument(strings.Join(lines, "\n"))
	err.Details = []map[string]any{{"@type": typeBadRequest, "fieldViolations": fv}}
	return err
}

// Texts of the authentication errors.
const (
	unregisteredCallers = "Method doesn't allow unregistered callers (callers without established identity). " +
		"Please use API Key or other form of API consumer identity to call this API."
	missingCredential = "Request is missing required authentication credential. Expected OAuth 2 access token, " +
		"login cookie or other valid authentication credential. See " +
		"https://developers.google.com/identity/sign-in/web/devconsole-project."
	invalidCredentials = "Request had invalid authentication credentials. Expected OAuth 2 access token, login " +
		"cookie or other valid authentication credential. See " +
		"https://developers.google.com/identity/sign-in/web/devconsole-project."
	apiKeysNotSupported = "API keys are not supported by this API. Expected OAuth2 access token or other " +
		"authentication credentials that assert a principal. See https://cloud.google.com/docs/authentication"
)

// rpcMethod names the Vertex AI RPC of method, as ErrorInfo metadata does:
// PredictionService's for generateContent, GenAiCacheService's for the
// cachedContents methods (google/cloud/aiplatform/v1beta1/gen_ai_cache_service.proto).
func rpcMethod(method Method) string {
	switch method {
	case MethodCreateCachedContent:
		return "GenAiCacheService.CreateCachedContent"
	case MethodGetCachedContent:
		return "GenAiCacheService.GetCachedContent"
	case MethodListCachedContents:
		return "GenAiCacheService.ListCachedContents"
	case MethodUpdateCachedContent:
		return "GenAiCacheService.UpdateCachedContent"
	case MethodDeleteCachedContent:
		return "GenAiCacheService.DeleteCachedContent"
	case MethodPredict:
		return "PredictionService.Predict"
	case MethodEmbedContent:
		return "PredictionService.EmbedContent"
	}
	return "PredictionService.GenerateContent"
}

func checkAuth(in *input) *APIError {
	c := in.creds
	unauthenticated := func(message string, details ...map[string]any) *APIError {
		return &APIError{Code: http.StatusUnauthorized, Status: "UNAUTHENTICATED", Message: message, Details: details}
	}
	missing := func(message string) *APIError {
		return unauthenticated(message, map[string]any{"@type": typeErrorInfo, "reason": "CREDENTIALS_MISSING",
			"domain": "googleapis.com", "metadata": map[string]any{"service": "aiplatform.googleapis.com",
				"method": "google.cloud.aiplatform." + in.version + "." + rpcMethod(in.method)}})
	}
	switch {
	case c.authorization != "" && c.token == "":
		return unauthenticated(invalidCredentials)
	case c.token != "":
		return nil
	case !in.vertex() && c.apiKey == "":
		return &APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED", Message: unregisteredCallers}
	case !in.vertex():
		return nil
	case c.apiKey == "":
		return missing(missingCredential)
	case in.project != "":
		return missing(apiKeysNotSupported)
	}
	return nil // Vertex AI express mode: an API key and no project
}

func checkJSONSyntax(in *input) *APIError {
	body := in.body
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	tree, err := parseJSON(body)
	if err != nil {
		return invalidArgument("Invalid JSON payload received. " + syntaxMessage(body, err.(*jsonSyntaxError)))
	}
	if tree.kind != jsonObject {
		return invalidArgument("Invalid JSON payload received. Root element must be a message.")
	}
	in.tree = tree
	return nil
}

// syntaxMessage describes a syntax error with the line around it and a
// caret under the offending byte, as the API does.
func syntaxMessage(body []byte, e *jsonSyntaxError) string {
	if e.eof {
		return "Unexpected end of string."
	}
	off := int(min(max(e.offset, 0), int64(len(body))))
	start := max(off-40, 0)
	if i := strings.LastIndexByte(string(body[start:off]), '\n'); i >= 0 {
		start += i + 1
	}
	end := min(off+20, len(body))
	if i := strings.IndexByte(string(body[off:end]), '\n'); i >= 0 {
		end = off + i
	}
	return fmt.Sprintf("Unexpected token.\n%s\n%s^", body[start:end], strings.Repeat(" ", off-start))
}

func checkResponseObject(in *input) *APIError {
	var v []fieldViolation
	for i, c := range in.tree.get("contents").elems() {
		for j, p := range c.get("parts").elems() {
			fr := p.get("functionResponse")
			if fr == nil || fr.kind != jsonObject {
				continue
			}
			path := fmt.Sprintf("contents[%d].parts[%d].function_response", i, j)
			switch r := fr.get("response"); {
			case r == nil || r.kind == jsonNull || r.kind == jsonObject:
			case r.kind == jsonArray:
				v = append(v, fieldViolation{path, fmt.Sprintf(
					"Invalid JSON payload received. Unknown name \"response\" at '%s': Proto field is not repeating, cannot start list.", path)})
			default:
				v = append(v, fieldViolation{path + ".response", fmt.Sprintf(
					"Invalid value at '%s.response' (type.googleapis.com/google.protobuf.Struct), %s", path, r)})
			}
		}
	}
	return payloadErrors(v)
}

func checkJSONFields(in *input) *APIError {
	req, canonical, violations := decodeRequest(in.backend, in.version, in.tree)
	if len(violations) > 0 {
		return payloadErrors(violations)
	}
	in.req, in.canonical = req, canonical
	return nil
}

func checkContentsRequired(in *input) *APIError {
	if len(in.req.Contents) == 0 {
		return requestErrors([]string{"contents: contents is not specified"})
	}
	return nil
}

// roles are the values Content.role may take; unset is accepted too.
var roles = []string{genai.RoleUser, genai.RoleModel, "function", "tool"}

func checkRoles(in *input) *APIError {
	for _, c := range in.req.Contents {
		if c.Role != "" && !slices.Contains(roles, c.Role) {
			return invalidArgument("Please use a valid role: user, model.")
		}
	}
	return nil
}

func checkPartsRequired(in *input) *APIError {
	var v []string
	for i, c := range in.req.Contents {
		if len(c.Parts) == 0 {
			if in.vertex() {
				return invalidArgument("Unable to submit request because it must include at least one parts field, which describes the prompt input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini")
			}
			v = append(v, fmt.Sprintf("contents[%d].parts: contents.parts must not be empty.", i))
		}
	}
	return requestErrors(v)
}

// partDataKeys are the members of Part's "data" oneof.
var partDataKeys = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse",
	"executableCode", "codeExecutionResult", "toolCall", "toolResponse"}

func checkPartData(in *input) *APIError {
	var v []string
	emptyText := false
	check := func(content *jsonValue, path string) {
		for j, p := range content.get("parts").elems() {
			signed := isSet(p.get("thoughtSignature"))
			if t := p.get("text"); t != nil && t.kind == jsonString && t.str == "" && !signed && countData(p) == 1 {
				emptyText = true
			}
			if hasData(p) || signed {
				continue
			}
			v = append(v, fmt.Sprintf("%s.parts[%d].data: required oneof field 'data' must have one initialized field", path, j))
		}
	}
	for i, c := range in.tree.get("contents").elems() {
		check(c, fmt.Sprintf("contents[%d]", i))
	}
	check(in.tree.get("systemInstruction"), "system_instruction")
	if err := requestErrors(v); err != nil {
		return err
	}
	if emptyText && in.vertex() {
		return invalidArgument("Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini")
	}
	return nil
}

// countData returns how many members of the data oneof a JSON part sets.
func countData(p *jsonValue) int {
	n := 0
	for _, k := range partDataKeys {
		if isSet(p.get(k)) {
			n++
		}
	}
	return n
}

// hasData reports whether a JSON part has a member of the data oneof.
func hasData(p *jsonValue) bool {
	for _, k := range partDataKeys {
		if isSet(p.get(k)) {
			return true
		}
	}
	return false
}

// isSet reports whether a JSON field is present and not null.
func isSet(v *jsonValue) bool {
	return v != nil && v.kind != jsonNull
}

func checkToolType(in *input) *APIError {
	var b strings.Builder
	for i, t := range in.req.Tools {
		if !hasNonZeroField(reflect.ValueOf(t).Elem()) {
			fmt.Fprintf(&b, "\n  * tools[%d].tool_type: required one_of 'tool_type' must have one initialized field", i)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return invalidArgument("The GenerateContentRequest proto is invalid:" + b.String())
}

// hasNonZeroField reports whether struct v has a field that is set; an
// empty slice or map is not.
func hasNonZeroField(v reflect.Value) bool {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice, reflect.Map:
			if f.Len() > 0 {
				return true
			}
		default:
			if !f.IsZero() {
				return true
			}
		}
	}
	return false
}

// declaration is a function declaration with its path in the request.
type declaration struct {
	*genai.FunctionDeclaration
	path string // "tools[0].function_declarations[1]"
}

func declarations(req *wireRequest) []declaration {
	var out []declaration
	for i, t := range req.Tools {
		for j, d := range t.FunctionDeclarations {
			out = append(out, declaration{d, fmt.Sprintf("tools[%d].function_declarations[%d]", i, j)})
		}
	}
	return out
}

func checkFunctionCallingConfig(in *input) *APIError {
	tc := in.req.ToolConfig
	if tc != nil && tc.FunctionCallingConfig != nil && len(in.req.Tools) > 0 && len(declarations(in.req)) == 0 {
		return invalidArgument("Function calling config is set without function_declarations.")
	}
	return nil
}

// functionName is the rule for function names: the v1beta proto's, with its
// 64-character limit (the SDK doc says 128).
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

func checkFunctionNames(in *input) *APIError {
	var v []string
	for _, d := range declarations(in.req) {
		if !functionName.MatchString(d.Name) {
			v = append(v, d.path+".name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.")
		}
	}
	return requestErrors(v)
}

func checkDuplicateFunctions(in *input) *APIError {
	seen := map[string]bool{}
	for _, d := range declarations(in.req) {
		if seen[d.Name] {
			return invalidArgument("Duplicate function declaration found: " + d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

func checkParametersExclusive(in *input) *APIError {
	var v []string
	for _, d := range declarations(in.req) {
		if d.Parameters != nil && d.ParametersJsonSchema != nil {
			v = append(v, d.path+": parameters and parameters_json_schema must not both be set.")
		}
	}
	return requestErrors(v)
}

// walkSchemas calls f for every schema in the parameters of every
// declaration, with its path.
func walkSchemas(req *wireRequest, f func(s *genai.Schema, path string)) {
	var walk func(s *genai.Schema, path string)
	walk = func(s *genai.Schema, path string) {
		if s == nil {
			return
		}
		f(s, path)
		for _, name := range sortedKeys(s.Properties) {
			walk(s.Properties[name], fmt.Sprintf("%s.properties[%s]", path, name))
		}
		walk(s.Items, path+".items")
		for i, a := range s.AnyOf {
			walk(a, fmt.Sprintf("%s.any_of[%d]", path, i))
		}
	}
	for _, d := range declarations(req) {
		walk(d.Parameters, d.path+".parameters")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func checkSchemaTypes(in *input) *APIError {
	var v []string
	walkSchemas(in.req, func(s *genai.Schema, path string) {
		if len(s.AnyOf) == 0 && (s.Type == "" || strings.EqualFold(string(s.Type), string(genai.TypeUnspecified))) {
			v = append(v, path+".type: must be specified when not using one_of, any_of or all_of fields")
		}
	})
	return requestErrors(v)
}

func checkSchemaRequired(in *input) *APIError {
	var v []string
	walkSchemas(in.req, func(s *genai.Schema, path string) {
		for i, name := range s.Required {
			if _, ok := s.Properties[name]; !ok {
				v = append(v, fmt.Sprintf("%s.required[%d]: property is not defined", path, i))
			}
		}
	})
	return requestErrors(v)
}

// turn is a run of consecutive contents of the same role, contents[start:end].
// The rules about function calls read a run as one turn: genai's Chat
// records a streamed answer as one model content per chunk, so a turn's
// calls can be spread over several contents.
type turn struct {
	model      bool
	start, end int
}

// located is a part with its indexes in contents.
type located struct {
	content, part int
	*genai.Part
}

func turnsOf(cs []*genai.Content) []turn {
	var out []turn
	for i, c := range cs {
		model := c.Role == genai.RoleModel
		if n := len(out); n > 0 && out[n-1].model == model {
			out[n-1].end = i + 1
			continue
		}
		out = append(out, turn{model: model, start: i, end: i + 1})
	}
	return out
}

// calls and responses return the functionCall and functionResponse parts
// of t, in order.
func (t turn) calls(cs []*genai.Content) []located {
	return t.parts(cs, func(p *genai.Part) bool { return p.FunctionCall != nil })
}

func (t turn) responses(cs []*genai.Content) []located {
	return t.parts(cs, func(p *genai.Part) bool { return p.FunctionResponse != nil })
}

func (t turn) parts(cs []*genai.Content, keep func(*genai.Part) bool) []located {
	var out []located
	for i := t.start; i < t.end; i++ {
		for j, p := range cs[i].Parts {
			if keep(p) {
				out = append(out, located{i, j, p})
			}
		}
	}
	return out
}

// isCallTurn reports whether t is a model turn with function calls.
func (t turn) isCallTurn(cs []*genai.Content) bool {
	return t.model && len(t.calls(cs)) > 0
}

func checkCallPlacement(in *input) *APIError {
	cs := in.req.Contents
	if ts := turnsOf(cs); ts[0].isCallTurn(cs) { // later model turns follow a user turn
		return invalidArgument("Please ensure that function call turns come immediately after a user turn or after a function response turn.")
	}
	return nil
}

func checkResponsePlacement(in *input) *APIError {
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k, t := range ts {
		if len(t.responses(cs)) > 0 && (k == 0 || !ts[k-1].isCallTurn(cs)) {
			return invalidArgument("Please ensure that function response turn comes immediately after a function call turn.")
		}
	}
	return nil
}

func checkResponseCount(in *input) *APIError {
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k, t := range ts {
		if t.isCallTurn(cs) && k+1 < len(ts) && len(ts[k+1].responses(cs)) != len(t.calls(cs)) {
			return invalidArgument("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
		}
	}
	return nil
}

func checkResponseIDs(in *input) *APIError {
	var v []string
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k := 1; k < len(ts); k++ {
		if ts[k-1].isCallTurn(cs) {
			v = append(v, matchResponses(ts[k-1].calls(cs), ts[k].responses(cs))...)
		}
	}
	return requestErrors(v)
}

// matchResponses matches responses to calls as multisets: a response with
// the id of a call answers that call; otherwise a response answers a call of
// the same name. It returns a violation for each response that answers no
// call: one whose id is none of the calls' ids when the calls have ids, or
// one whose name is no remaining call's.
func matchResponses(calls, responses []located) []string {
	used := make([]bool, len(calls))
	callIDs := false
	for _, c := range calls {
		callIDs = callIDs || c.FunctionCall.ID != ""
	}
	find := func(match func(*genai.FunctionCall) bool) int {
		for k, c := range calls {
			if !used[k] && match(c.FunctionCall) {
				used[k] = true
				return k
			}
		}
		return -1
	}
	byID := func(r *genai.FunctionResponse) bool { return r.ID != "" && callIDs }
	violations := make([]string, len(responses))
	// Responses with an id first, so that one answered by name cannot take
	// the call another answers by id.
	for i, rp := range responses {
		r := rp.FunctionResponse
		if !byID(r) {
			continue
		}
		path := fmt.Sprintf("contents[%d].parts[%d].function_response", rp.content, rp.part)
		k := find(func(c *genai.FunctionCall) bool { return c.ID == r.ID })
		switch {
		case k < 0:
			violations[i] = fmt.Sprintf("%s.id: functionResponse.id does not match functionCall.id: %q is not the id of a function call of the function call turn.", path, r.ID)
		case calls[k].FunctionCall.Name != r.Name:
			violations[i] = fmt.Sprintf("%s.name: the function call with id %q is named %q, not %q.", path, r.ID, calls[k].FunctionCall.Name, r.Name)
		}
	}
	for i, rp := range responses {
		r := rp.FunctionResponse
		if byID(r) {
			continue
		}
		// A call without an id first, then any call of that name.
		if find(func(c *genai.FunctionCall) bool { return c.ID == "" && c.Name == r.Name }) < 0 &&
			find(func(c *genai.FunctionCall) bool { return c.Name == r.Name }) < 0 {
			violations[i] = fmt.Sprintf("contents[%d].parts[%d].function_response.name: no function call named %q in the function call turn.", rp.content, rp.part, r.Name)
		}
	}
	var v []string
	for _, s := range violations {
		if s != "" {
			v = append(v, s)
		}
	}
	return v
}

func checkFunctionResponseParts(in *input) *APIError {
	if isGemini3(in.model) {
		return nil
	}
	for _, c := range in.req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0 {
				return invalidArgument("Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling")
			}
		}
	}
	return nil
}

// maxTemperature is the bound of Vertex AI's message: temperatures from 0
// (inclusive) to it (exclusive) are accepted.
const maxTemperature = 2.0001

func checkTemperature(in *input) *APIError {
	gc := in.req.GenerationConfig
	if !in.vertex() || gc == nil || gc.Temperature == nil {
		return nil
	}
	if t := *gc.Temperature; t < 0 || t >= maxTemperature {
		return invalidArgument(fmt.Sprintf("Unable to submit request because it has a temperature value of %s but the supported range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again.",
			strconv.FormatFloat(float64(t), 'g', -1, 32)))
	}
	return nil
}

func checkPenalty(in *input) *APIError {
	gc := in.req.GenerationConfig
	if in.vertex() || gc == nil || !penaltyDisabled(in.model) {
		return nil
	}
	if p, f := gc.PresencePenalty, gc.FrequencyPenalty; p != nil && *p != 0 || f != nil && *f != 0 {
		return invalidArgument("Penalty is not enabled for models/" + in.model)
	}
	return nil
}

// penaltyDisabled reports whether the Gemini API refuses presence and
// frequency penalties for model: the Gemini 2.5 models (the rule "penalty"
// gives the sources).
func penaltyDisabled(model string) bool {
	major, tail, ok := modelname.Major(strings.ToLower(model))
	return ok && major == 2 && strings.HasPrefix(tail, ".5")
}

// isGemini3 reports whether model is one of the Gemini 3 models, which
// require thought signatures and always send function-call ids.
func isGemini3(model string) bool {
	return strings.HasPrefix(model, "gemini-3")
}

func checkThoughtSignatures(in *input) *APIError {
	if !isGemini3(in.model) {
		return nil
	}
	cs := in.req.Contents
	current := 0 // the index of the most recent user content that is not only function responses
	for i, c := range cs {
		if c.Role != genai.RoleModel && len(turn{start: i, end: i + 1}.responses(cs)) < len(c.Parts) {
			current = i
		}
	}
	for _, t := range turnsOf(cs) {
		if !t.model || t.start < current {
			continue
		}
		if calls := t.calls(cs); len(calls) > 0 && len(calls[0].ThoughtSignature) == 0 {
			return invalidArgument(fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", calls[0].FunctionCall.Name, calls[0].content+1))
		}
	}
	return nil
}
