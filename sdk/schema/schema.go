// Package schema derives JSON Schemas from Go types and validates JSON
// documents against them, turning the first violation into a typed
// ERR_INVALID_INPUT error that names the field and the rule.
package schema

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// For derives the JSON Schema of T.
//
// Struct fields follow encoding/json naming; a field without `omitempty` is
// required. Constraints come from `jsonschema` tags as understood by
// github.com/invopop/jsonschema, for example
// `jsonschema:"minLength=1,maxLength=256,description=Task title"` or
// `jsonschema:"enum=low,enum=normal"`. A `pattern:"^[a-z]{1,8}$"` tag
// holds a regular expression verbatim, commas included (on a slice it
// constrains each item), and a `description:"..."` tag a sentence verbatim.
// Objects refuse unknown properties.
func For[T any]() json.RawMessage {
	var zero T
	return forType(reflect.TypeOf(&zero).Elem())
}

// forType is For with a reflect.Type.
func forType(t reflect.Type) json.RawMessage {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Map {
		return json.RawMessage(`{"type":"object"}`)
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
	s := r.ReflectFromType(t)
	applyTags(t, s, 0)
	nameAnyValues(s, 0)
	s.Version = ""
	s.ID = ""
	raw, err := marshalSchema(s)
	if err != nil {
		// The reflector only produces marshalable values; a failure here
		// is a bug in a plugin's types, surfaced at registration.
		panic(fmt.Sprintf("schema: marshal schema for %s: %v", t, err))
	}
	if a, ok := reflect.New(t).Interface().(Amender); ok {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			panic(fmt.Sprintf("schema: decode schema for %s: %v", t, err))
		}
		a.AmendSchema(doc)
		if raw, err = json.Marshal(doc); err != nil {
			panic(fmt.Sprintf("schema: marshal amended schema for %s: %v", t, err))
		}
	}
	return raw
}

// Amender is implemented (on the value or the pointer) by a type whose
// schema needs what tags cannot say: a union such as "a name or a
// number", or a constraint on a field whose type belongs to another
// package. AmendSchema gets the derived schema as decoded JSON and
// changes it in place.
type Amender interface {
	AmendSchema(s map[string]any)
}
