package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// errorDef is the name of the error envelope's definition in a published
// output schema.
const errorDef = "error"

// envelopeSchema is the error envelope's schema, derived from errs.Envelope.
var envelopeSchema = sync.OnceValue(func() json.RawMessage { return For[errs.Envelope]() })

// Published returns the outputSchema tools/list publishes for a tool whose
// success object has the schema success (docs/decisions.md D37): an object
// that is either the success object or the error envelope of
// docs/decisions.md D3,
//
//	{"type":"object","anyOf":[<success>,{"$ref":"#/$defs/error"}],"$defs":{"error":<envelope>}}
//
// MCP wants "type":"object" at the root; anyOf keeps each half exactly as
// strict as its own schema (unknown fields, wrong types and missing required
// fields refused), and clients that validate structuredContent on errors too
// (the TypeScript SDK before 2.0) accept the envelope. The root carries no
// $schema: the TypeScript SDK's default Ajv rejects a 2020-12 $schema, and
// the keywords used mean the same in draft 7 and 2020-12. The success
// schema's own $defs move to the root, where its "#/$defs/..." references
// point. An empty success schema publishes none (nil).
func Published(success json.RawMessage) (json.RawMessage, error) {
	success = bytes.TrimSpace(success)
	if len(success) == 0 {
		return nil, nil
	}
	if !json.Valid(success) || success[0] != '{' {
		return nil, fmt.Errorf("output schema is not a JSON object: %.40s", success)
	}
	defs := json.RawMessage(`{"` + errorDef + `":` + string(envelopeSchema()) + `}`)
	// Only a schema that may hold root keywords to move is decoded: the
	// host publishes every tool of every plugin at start-up.
	if bytes.Contains(success, []byte(`"$defs"`)) || bytes.Contains(success, []byte(`"definitions"`)) ||
		bytes.Contains(success, []byte(`"$schema"`)) || bytes.Contains(success, []byte(`"$id"`)) {
		var root map[string]json.RawMessage
		if err := json.Unmarshal(success, &root); err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		if _, ok := root["$id"]; ok {
			return nil, fmt.Errorf("output schema has an $id; publish it without one")
		}
		if _, ok := root["definitions"]; ok {
			return nil, fmt.Errorf("output schema has definitions; use $defs")
		}
		delete(root, "$schema")
		if raw, ok := root["$defs"]; ok {
			var own map[string]json.RawMessage
			if err := json.Unmarshal(raw, &own); err != nil {
				return nil, fmt.Errorf("output schema $defs: %w", err)
			}
			if _, clash := own[errorDef]; clash {
				return nil, fmt.Errorf("output schema defines $defs/%s, the name of the error envelope; rename it", errorDef)
			}
			own[errorDef] = envelopeSchema()
			merged, err := json.Marshal(own)
			if err != nil {
				return nil, err
			}
			defs = merged
			delete(root, "$defs")
		}
		var err error
		if success, err = json.Marshal(root); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.Grow(len(success) + len(defs) + 64)
	b.WriteString(`{"type":"object","anyOf":[`)
	b.Write(success)
	b.WriteString(`,{"$ref":"#/$defs/` + errorDef + `"}],"$defs":`)
	b.Write(defs)
	b.WriteByte('}')
	return b.Bytes(), nil
}
