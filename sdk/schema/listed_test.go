package schema

import (
	"encoding/json"
	"testing"
)

// The listed output schema must admit every success object and the error
// envelope (docs/decisions.md D3), whatever the full schema requires.
func TestListedAdmitsSuccessAndErrorEnvelope(t *testing.T) {
	full := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string"},"n":{"type":"integer"}}}`)
	listed, err := Listed(full)
	if err != nil {
		t.Fatal(err)
	}
	v := MustCompile(listed)
	for _, doc := range []string{
		`{"id":"x","n":3}`,
		`{"error":{"code":"ERR_NOT_FOUND","message":"no such thing","details":{"field":"id"}}}`,
	} {
		if e := v.Validate([]byte(doc)); e != nil {
			t.Errorf("listed schema refuses %s: %v", doc, e)
		}
	}
	if e := v.Validate([]byte(`{"error":"not an object"}`)); e == nil {
		t.Error("listed schema admits an error that is not an object")
	}
	if _, err := Listed(json.RawMessage(`[1,2]`)); err == nil {
		t.Error("Listed accepted a schema that is not an object")
	}
}

// Listed refuses what is not a JSON object, valid JSON or not.
func TestListedRefusesWhatIsNotAnObject(t *testing.T) {
	for _, bad := range []string{`[1,2]`, `"x"`, `{"a":`, `{} {}`, `  7 `, `{"a":1}x`} {
		if _, err := Listed(json.RawMessage(bad)); err == nil {
			t.Errorf("Listed accepted %s", bad)
		}
	}
	for _, ok := range []string{``, ` {"type":"object"} `, `{}`} {
		if _, err := Listed(json.RawMessage(ok)); err != nil {
			t.Errorf("Listed refused %q: %v", ok, err)
		}
	}
}
