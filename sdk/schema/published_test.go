package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// compileBoth compiles a published schema with this package's validator and
// with an independent 2020-12 one.
func compileBoth(t *testing.T, raw json.RawMessage) (*Validator, *sjs.Schema) {
	t.Helper()
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("mem://published.json", doc); err != nil {
		t.Fatal(err)
	}
	other, err := c.Compile("mem://published.json")
	if err != nil {
		t.Fatalf("published schema does not compile: %v\n%s", err, raw)
	}
	return MustCompile(raw), other
}

// The published output schema admits the success object and the error
// envelope (docs/decisions.md D3, D37) and nothing else: each half is as
// strict as its own schema.
func TestPublishedAdmitsSuccessAndErrorOnly(t *testing.T) {
	t.Parallel()
	success := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id","state"],"properties":{"id":{"type":"string"},"state":{"type":"string","enum":["open","done"]},"n":{"type":"integer"}}}`)
	pub, err := Published(success)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(pub, &root); err != nil {
		t.Fatal(err)
	}
	if root["type"] != "object" || root["$schema"] != nil {
		t.Fatalf("root = %s; MCP wants type object and no $schema", pub)
	}
	own, other := compileBoth(t, pub)
	for doc, want := range map[string]bool{
		`{"id":"x","state":"open","n":3}`: true,
		`{"error":{"code":"ERR_NOT_FOUND","message":"no such thing","details":{"field":"id"}}}`: true,
		`{"error":{"code":"ERR_NOT_FOUND","message":"m","details":{}}}`:                         true,
		`{}`:                        false,
		`{"unexpected":1}`:          false,
		`{"id":"x"}`:                false,
		`{"id":1,"state":"open"}`:   false,
		`{"id":"x","state":"gone"}`: false,
		`{"error":"not an object"}`: false,
		`{"error":{"code":"ERR_X","message":"m"}}`:                                  false,
		`{"error":{"code":"","message":"m","details":{}}}`:                          false,
		`{"error":{"code":"ERR_X","message":"m","details":{}},"id":"x"}`:            false,
		`{"error":{"code":"ERR_X","message":"m","details":{},"extra":true}}`:        false,
		`{"id":"x","state":"open","error":{"code":"E","message":"m","details":{}}}`: false,
		`[]`: false,
	} {
		if got := own.Validate([]byte(doc)) == nil; got != want {
			t.Errorf("own validator: %s admitted=%v, want %v", doc, got, want)
		}
		inst, err := sjs.UnmarshalJSON(bytes.NewReader([]byte(doc)))
		if err != nil {
			t.Fatal(err)
		}
		if got := other.Validate(inst) == nil; got != want {
			t.Errorf("2020-12 validator: %s admitted=%v, want %v", doc, got, want)
		}
	}
}

// A success schema's own $defs move to the root, where its references
// point; its $schema goes.
func TestPublishedHoistsDefinitions(t *testing.T) {
	t.Parallel()
	success := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"item":{"type":"string","minLength":1}},"type":"object","additionalProperties":false,"required":["items"],"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}}}`)
	pub, err := Published(success)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(pub, []byte(`"$schema"`)) {
		t.Errorf("published schema keeps $schema: %s", pub)
	}
	own, other := compileBoth(t, pub)
	for doc, want := range map[string]bool{`{"items":["a"]}`: true, `{"items":[""]}`: false} {
		if got := own.Validate([]byte(doc)) == nil; got != want {
			t.Errorf("own validator: %s admitted=%v, want %v", doc, got, want)
		}
		inst, _ := sjs.UnmarshalJSON(bytes.NewReader([]byte(doc)))
		if got := other.Validate(inst) == nil; got != want {
			t.Errorf("2020-12 validator: %s admitted=%v, want %v", doc, got, want)
		}
	}
	if _, err := Published(json.RawMessage(`{"$defs":{"error":{}},"type":"object"}`)); err == nil {
		t.Error("Published accepted a success schema that defines $defs/error")
	}
}

// Published refuses what is not a JSON object, valid JSON or not, and
// publishes nothing for a tool that declares no output schema.
func TestPublishedRefusesWhatIsNotAnObject(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`[1,2]`, `"x"`, `{"a":`, `{} {}`, `  7 `, `{"a":1}x`} {
		if _, err := Published(json.RawMessage(bad)); err == nil {
			t.Errorf("Published accepted %s", bad)
		}
	}
	if pub, err := Published(nil); err != nil || pub != nil {
		t.Errorf("Published(nil) = %s, %v; want nothing", pub, err)
	}
	if _, err := Published(json.RawMessage(` {"type":"object"} `)); err != nil {
		t.Errorf("Published refused a bare object schema: %v", err)
	}
}
