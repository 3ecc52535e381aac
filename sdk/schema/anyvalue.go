package schema

import (
	"encoding/json"

	"github.com/invopop/jsonschema"
)

// jsonKinds are the JSON types, each named in the schema of a value that may
// be any of them.
var jsonKinds = []string{"object", "array", "string", "number", "boolean", "null"}

// nameAnyValues rewrites, below s, every schema that admits any value (a
// json.RawMessage or interface field: a bare true, or a description alone)
// as an anyOf naming each JSON type, and drops an additionalProperties that
// admits anything (a map of raw values), which is what an object admits
// anyway. A bare true says nothing to a client, and MCP Inspector's strict
// checks refuse it (docs/decisions.md D37).
func nameAnyValues(s *jsonschema.Schema, depth int) {
	if s == nil || depth > 64 {
		return
	}
	fix := func(c *jsonschema.Schema) *jsonschema.Schema {
		if c == nil {
			return nil
		}
		if admitsAnything(c) {
			named := *c
			named.AnyOf = nil
			for _, k := range jsonKinds {
				named.AnyOf = append(named.AnyOf, &jsonschema.Schema{Type: k})
			}
			return &named
		}
		nameAnyValues(c, depth+1)
		return c
	}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			p.Value = fix(p.Value)
		}
	}
	s.Items = fix(s.Items)
	if s.AdditionalProperties != nil && isTrue(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	} else if s.AdditionalProperties != nil && !opaque(s.AdditionalProperties) {
		nameAnyValues(s.AdditionalProperties, depth+1)
	}
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for i := range l {
			l[i] = fix(l[i])
		}
	}
	for k, d := range s.Definitions {
		s.Definitions[k] = fix(d)
	}
}

// admitsAnything reports a schema with no constraint: true, {}, or
// annotations alone.
func admitsAnything(c *jsonschema.Schema) bool {
	if opaque(c) {
		return isTrue(c)
	}
	bare := *c
	bare.Title, bare.Description, bare.Comments, bare.Default, bare.Examples, bare.Extras = "", "", "", nil, nil, nil
	return opaque(&bare) && isTrue(&bare)
}

// isTrue reports a schema that encodes as true (or {}).
func isTrue(c *jsonschema.Schema) bool {
	if !opaque(c) {
		return false
	}
	raw, err := json.Marshal(c)
	return err == nil && (string(raw) == "true" || string(raw) == "{}")
}
