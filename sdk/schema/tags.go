package schema

import (
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// applyTags sets the `pattern:"..."` and `description:"..."` struct tags
// of t's fields on the derived schema s. Each tag's whole value is used
// verbatim, so a pattern or a sentence may hold commas and equals signs,
// which the comma-separated `jsonschema` tag cannot carry readably. On a
// slice or array field the pattern constrains each item; the description
// always describes the field.
func applyTags(t reflect.Type, s *jsonschema.Schema, depth int) {
	t = deref(t)
	if depth > 32 || s == nil || s.Properties == nil || t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := jsonName(f)
		if inline {
			// Embedded structs are flattened into the parent's properties.
			applyTags(f.Type, s, depth+1)
			continue
		}
		p, ok := s.Properties.Get(name)
		if !ok || p == nil {
			continue
		}
		ft := deref(f.Type)
		listy := ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array
		if d, ok := f.Tag.Lookup("description"); ok {
			p.Description = d
		}
		if pat, ok := f.Tag.Lookup("pattern"); ok {
			if listy && p.Items != nil {
				p.Items.Pattern = pat
			} else {
				p.Pattern = pat
			}
		}
		switch {
		case ft.Kind() == reflect.Struct:
			applyTags(ft, p, depth+1)
		case listy && p.Items != nil:
			applyTags(ft.Elem(), p.Items, depth+1)
		}
	}
}

// jsonName is the property name encoding/json gives f; inline reports an
// embedded struct without a name of its own.
func jsonName(f reflect.StructField) (name string, inline bool) {
	tag := f.Tag.Get("json")
	name, _, _ = strings.Cut(tag, ",")
	if name == "-" && tag == "-" {
		return "", false
	}
	if name == "" {
		if f.Anonymous && deref(f.Type).Kind() == reflect.Struct {
			return "", true
		}
		name = f.Name
	}
	return name, false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
