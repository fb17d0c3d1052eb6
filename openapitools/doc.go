// Package openapitools makes tools from an OpenAPI description: every
// operation of a REST API a team already describes becomes a
// [toolset.Tool] a Gemini model can call, with its parameters where they
// belong, the program's credentials, and approval for what changes things.
//
//	api, err := openapitools.ParseFile(ctx, "petstore.yaml", &openapitools.Options{
//		Credentials: map[string]openapitools.Credential{"api_key": openapitools.APIKey(os.Getenv("PETSTORE_KEY"))},
//	})
//	if err != nil { ... }
//	for _, op := range api.Skipped() {
//		log.Printf("no tool for %s %s: %v", op.Method, op.Path, op.Err)
//	}
//	tools, err := api.Set()
//	a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-2.5-flash",
//		Tools: tools, NeedsApproval: api.NeedsApproval})
//
// # Descriptions
//
// [Parse], [ParseFile] and [ParseURL] read Swagger 2.0, OpenAPI 3.0 and
// OpenAPI 3.1, as JSON or YAML, with github.com/getkin/kin-openapi
// (Swagger 2.0 is converted to OpenAPI 3 first, what the conversion loses
// put back: collection formats, required forms). A description is read
// once; each operation (path and method) becomes a tool, or an
// [Operation] whose Err says why not ([API.Skipped]): never a failure of
// the whole description. A $ref to another file or URL is refused unless
// Options.AllowExternalRefs is set, and then read only through the
// program's client, or from the description's directory.
//
// # Names and descriptions
//
// A tool is named after its operationId, or after its method and path
// when there is none (get_pets_petId), with Options.Prefix in front, each
// character Gemini refuses replaced by '_', at most 64 characters, and a
// number after a name already taken. Its description is the summary, then
// the description, cut at a word after Options.MaxDescriptionLen bytes.
//
// # Arguments
//
// A tool's arguments are one JSON object: each parameter (path, query,
// header, cookie) is a property named after it, and the request body, when
// there is one, is the property "body", whatever its media type. Names
// follow Gemini's rule for parameter names: a character other than a
// letter, a digit or '_' becomes '_' (api-version: api_version). Two
// parameters whose names would be the same (OpenAPI tells parameters apart
// by name and location: an id in the path and one in a header) both get
// their location in front: path_id, header_id; a parameter named body,
// beside a body, becomes query_body. [Operation.Arguments] lists where each
// argument goes. Parameters an apiKey security scheme supplies, and the
// Accept, Content-Type and Authorization headers, are never arguments.
//
// The schema is the description's, faithfully, in JSON Schema 2020-12:
// every schema reached through a $ref is a definition in $defs, written
// once per tool and referred to, so that chains of $refs stay chains and
// recursive schemas (a tree) stay finite; allOf, oneOf, anyOf, not, enums,
// const, formats, defaults, bounds, patterns and required are kept. A
// discriminator becomes part of the schema: each alternative of a oneOf or
// anyOf requires the property's values that select it, and a base schema
// with subtypes (the allOf style of Swagger 2.0 and Azure's descriptions)
// stands, where it is used, for any of its subtypes, each with its value.
// OpenAPI 3.0's nullable adds null to the types (and to an enum), 3.1's
// type arrays are kept; 3.0's readOnly properties, which a request does
// not send, are left out, as is their required. Where a description is
// wrong in a common way it is read as meant: an enum of single values on
// an array applies to its items, a path {template} no parameter declares
// is a string, a pattern Go cannot compile is described to the model
// rather than checked. The geminiadapter sends each schema as Gemini's own
// Parameters where it can say all of it, and as ParametersJsonSchema
// otherwise.
//
// Each tool is checked as [toolset.Define] checks any: a schema over
// [toolset.MaxSchemaSize], once its $refs are followed, is refused, and
// the operation is skipped with an error wrapping
// [toolset.ErrSchemaTooLarge]; one that cannot be a tool (a $ref that leads
// nowhere or back to itself, a schema nested deeper than 128 levels) with
// an error wrapping [ErrUnsupported]. Arguments are validated against the
// schema before any request is built.
//
// # Calls
//
// A call builds its request as the description says: the server's URL
// (the operation's, the path's or the description's first, its variables
// from Options.ServerVariables or their defaults; Options.BaseURL replaces
// it) followed by the path, each parameter percent-encoded in its style
// (simple, label, matrix; form, spaceDelimited, pipeDelimited, deepObject;
// explode or not; allowReserved), headers and cookies, and the body as
// JSON, application/x-www-form-urlencoded or multipart/form-data (with
// the media type's encoding: a property's style, its content type, files),
// or as the text it is for another media type. Of several media types,
// JSON is sent, then a form, then multipart.
//
// The program's [http.Client] (Options.HTTPClient) sends it, within
// Options.Timeout (30 s by default) and the call's context. The model
// reads a [Response]: the status, the body parsed when it is JSON, as text
// when it is text, cut after Options.MaxResponseBytes (32 KiB by default),
// and a summary (media type and size) when it is binary, unless
// Options.Binary keeps the body and says what the model reads instead (a
// reference to an artifact, say). A 404 or a 500 is an answer the model
// reads, not a failed call; a call that gets no answer fails with an error
// the model reads.
//
// # Credentials
//
// The program supplies the credentials of each security scheme by name in
// Options.Credentials: [APIKey] for an apiKey scheme (header, query or
// cookie), [Basic] and [Bearer] for http schemes, [Bearer], [TokenSource]
// or [ClientCredentials] for oauth2 and openIdConnect, [CustomAuth] for
// anything else (a request signature). A call uses the first of its
// operation's security requirements the program supplied all of; with
// none, it is refused before any request with an error wrapping
// [ErrNoCredentials]. Credentials never print, log or encode, and a
// redirect to another host, or from https to http, does not carry them
// (net/http alone would carry an API key header).
//
// # Choosing and approving
//
// Options.Tags, Methods, Paths and Include choose the operations; the
// others are reported with an error wrapping [ErrExcluded]. A GET or HEAD
// operation is ReadOnly: its tool is safe to repeat
// ([toolset.Tool.SafeToRepeat]) and needs no approval; any other needs a
// person's approval by default (Options.NeedsApproval overrides), which
// [API.NeedsApproval] hands to agent.Config.NeedsApproval, so that an agent
// given a whole API cannot delete a customer without a person saying so.
//
// # Large APIs
//
// Declaring hundreds of operations costs their declarations on every model
// call. [API.SearchTools] offers two tools instead: search_operations,
// which lists the operations that match a query with their schemas, and
// call_operation, which calls one by name, its arguments validated against
// that operation's schema. BENCHMARKS.md measures what each mode costs.
package openapitools
