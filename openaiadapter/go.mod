module github.com/toolnexus/toolnexus-go/openaiadapter

go 1.25.0

// The root module comes from this working tree during development; a
// release of this module requires a tagged version of it instead.
replace github.com/toolnexus/toolnexus-go => ../

require (
	github.com/google/go-cmp v0.7.0
	github.com/google/jsonschema-go v0.4.3
	github.com/openai/openai-go/v3 v3.74.0
	github.com/toolnexus/toolnexus-go v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/tidwall/gjson v1.19.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
)
