package geminiadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func noRun(context.Context, map[string]any) (any, error) { return nil, nil }

// TestExpandingSchemaRefused is issue 32's attack on the adapter: 14
// levels of $defs that each refer twice to the one before (1.4 KB) became
// a 967 KB declaration, 16 levels 3.9 MB, in 3 s and 447 MB of
// allocations. Schema now refuses both before inlining anything, and so do
// Declaration and Tools, through the tool's check.
func TestExpandingSchemaRefused(t *testing.T) {
	for _, levels := range []int{14, 16} {
		t.Run(fmt.Sprint("levels=", levels), func(t *testing.T) {
			src := schematest.Doubling(levels)
			gs, err := geminiadapter.Schema(parse(t, src))
			if !errors.Is(err, toolset.ErrSchemaTooLarge) {
				out, _ := json.Marshal(gs)
				t.Fatalf("Schema(%d bytes) = %d bytes, %v; want ErrSchemaTooLarge", len(src), len(out), err)
			}
			tool := &toolset.Tool{Name: "t", Run: noRun, InputSchema: parse(t, src)}
			for _, o := range []geminiadapter.Options{{}, {ForceJSONSchema: true}} {
				if _, err := o.Declaration(tool); !errors.Is(err, toolset.ErrSchemaTooLarge) {
					t.Errorf("%+v.Declaration = %v; want ErrSchemaTooLarge", o, err)
				}
				if _, err := o.Tools(tool); !errors.Is(err, toolset.ErrSchemaTooLarge) {
					t.Errorf("%+v.Tools = %v; want ErrSchemaTooLarge", o, err)
				}
			}
		})
	}
}

// TestSchemaContainingItself: a schema built in Go that contains itself
// made Schema recurse until the stack overflowed; it is unsupported.
func TestSchemaContainingItself(t *testing.T) {
	s := &jsonschema.Schema{Type: "object"}
	s.Properties = map[string]*jsonschema.Schema{"self": s}
	if _, err := geminiadapter.Schema(s); !errors.Is(err, geminiadapter.ErrUnsupported) {
		t.Errorf("Schema(a schema containing itself) = %v; want ErrUnsupported", err)
	}
}

// TestSharedDefinitionsKept: a legitimate schema whose one definition is
// used by many properties is sent with its $defs, in ParametersJsonSchema,
// rather than inlined twenty times; the real client sends it and the fake,
// like the Gemini API, takes it. Used once, it is inlined as before.
func TestSharedDefinitionsKept(t *testing.T) {
	shared := toolset.MustDefine(toolset.Tool{Name: "deliver", Run: noRun, InputSchema: parse(t, schematest.Shared(20))})
	d, err := geminiadapter.Declaration(shared)
	if err != nil {
		t.Fatal(err)
	}
	if d.Parameters != nil || d.ParametersJsonSchema != shared.InputSchema {
		t.Fatalf("Declaration(shared by 20) = Parameters %v, ParametersJsonSchema %v; want the JSON Schema", d.Parameters, d.ParametersJsonSchema)
	}
	once := toolset.MustDefine(toolset.Tool{Name: "deliver", Run: noRun, InputSchema: parse(t, schematest.Shared(1))})
	if d, err := geminiadapter.Declaration(once); err != nil || d.Parameters == nil || d.Parameters.Properties["stop0"].Properties["city"] == nil {
		t.Errorf("Declaration(used once) = %+v, %v; want the definition inlined", d, err)
	}

	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("ok"))
	tools, err := geminiadapter.Tools(shared)
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Client().Models.GenerateContent(t.Context(), "gemini-2.5-flash", genai.Text("deliver"),
		&genai.GenerateContentConfig{Tools: tools})
	if err != nil {
		t.Fatalf("GenerateContent with the shared definitions = %v", err)
	}
	body := srv.LastRequest().Body
	if !bytes.Contains(body, []byte(`"parametersJsonSchema":{"$defs":{"address":`)) || bytes.Count(body, []byte(`"street"`)) != 2 {
		t.Errorf("request body does not hold the schema with its $defs, the address once:\n%s", body)
	}
	if n := len(body); n > 4000 {
		t.Errorf("request body is %d bytes", n)
	}
}

// BenchmarkSchemaExpanding converts issue 32's attack with Schema, which
// inlined every $ref: 14 levels took 464 ms and 111 MB, 16 levels 3.1 s
// and 447 MB (this machine, before the budget).
func BenchmarkSchemaExpanding(b *testing.B) {
	for _, levels := range []int{10, 14, 16} {
		b.Run(fmt.Sprint("levels=", levels), func(b *testing.B) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(schematest.Doubling(levels)), &s); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				gs, err := geminiadapter.Schema(&s)
				if err == nil {
					out, _ := json.Marshal(gs)
					b.ReportMetric(float64(len(out)), "bytes-out")
				}
			}
		})
	}
}
