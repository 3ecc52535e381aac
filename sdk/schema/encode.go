package schema

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
)

// marshalSchema encodes a derived schema exactly as json.Marshal does, in
// one pass. json.Marshal goes through the library's MarshalJSON at every
// level, which marshals its subtree again and has the result re-scanned by
// each enclosing level: deriving the schemas of a plugin's tools was most of
// a plugin's start-up (a third of every built-in plugin's CPU before it
// served). Nodes this encoder cannot see into (boolean and empty schemas,
// whose marker field is unexported) go through json.Marshal, as do values
// of arbitrary type (enum, const, default, examples, extras).
func marshalSchema(s *jsonschema.Schema) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeSchema(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// opaque reports whether s has no exported field set: a boolean schema, or
// an empty one, both encoded by the library itself.
func opaque(s *jsonschema.Schema) bool {
	return s.Version == "" && s.ID == "" && s.Anchor == "" && s.Ref == "" && s.DynamicRef == "" &&
		s.Definitions == nil && s.Comments == "" && s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil &&
		s.Not == nil && s.If == nil && s.Then == nil && s.Else == nil && s.DependentSchemas == nil &&
		s.PrefixItems == nil && s.Items == nil && s.Contains == nil && s.Properties == nil &&
		s.PatternProperties == nil && s.AdditionalProperties == nil && s.PropertyNames == nil &&
		s.Type == "" && s.Enum == nil && s.Const == nil && s.MultipleOf == "" && s.Maximum == "" &&
		s.ExclusiveMaximum == "" && s.Minimum == "" && s.ExclusiveMinimum == "" && s.MaxLength == nil &&
		s.MinLength == nil && s.Pattern == "" && s.MaxItems == nil && s.MinItems == nil && !s.UniqueItems &&
		s.MaxContains == nil && s.MinContains == nil && s.MaxProperties == nil && s.MinProperties == nil &&
		s.Required == nil && s.DependentRequired == nil && s.Format == "" && s.ContentEncoding == "" &&
		s.ContentMediaType == "" && s.ContentSchema == nil && s.Title == "" && s.Description == "" &&
		s.Default == nil && !s.Deprecated && !s.ReadOnly && !s.WriteOnly && s.Examples == nil && s.Extras == nil
}

// fields writes one object's members, each preceded by a comma but the
// first.
type fields struct {
	b   *bytes.Buffer
	n   int
	err error
}

func (f *fields) key(k string) {
	if f.n > 0 {
		f.b.WriteByte(',')
	}
	f.n++
	writeString(f.b, k)
	f.b.WriteByte(':')
}

func (f *fields) str(k, v string) {
	if v != "" {
		f.key(k)
		writeString(f.b, v)
	}
}

func (f *fields) boolean(k string, v bool) {
	if v {
		f.key(k)
		f.b.WriteString("true")
	}
}

func (f *fields) count(k string, v *uint64) {
	if v != nil {
		f.key(k)
		f.b.WriteString(strconv.FormatUint(*v, 10))
	}
}

func (f *fields) value(k string, v any) {
	if f.err != nil {
		return
	}
	f.key(k)
	raw, err := json.Marshal(v)
	if err != nil {
		f.err = err
		return
	}
	f.b.Write(raw)
}

func (f *fields) number(k string, v json.Number) {
	if v != "" {
		f.value(k, v)
	}
}

func (f *fields) schema(k string, s *jsonschema.Schema) {
	if s != nil && f.err == nil {
		f.key(k)
		f.err = encodeSchema(f.b, s)
	}
}

func (f *fields) list(k string, l []*jsonschema.Schema) {
	if len(l) == 0 || f.err != nil {
		return
	}
	f.key(k)
	f.b.WriteByte('[')
	for i, s := range l {
		if i > 0 {
			f.b.WriteByte(',')
		}
		if f.err = encodeSchema(f.b, s); f.err != nil {
			return
		}
	}
	f.b.WriteByte(']')
}

func (f *fields) schemaMap(k string, m map[string]*jsonschema.Schema) {
	if len(m) == 0 || f.err != nil {
		return
	}
	f.key(k)
	inner := fields{b: f.b}
	f.b.WriteByte('{')
	for _, name := range sortedKeys(m) {
		if inner.schema(name, m[name]); inner.err != nil {
			f.err = inner.err
			return
		}
	}
	f.b.WriteByte('}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func encodeSchema(b *bytes.Buffer, s *jsonschema.Schema) error {
	if s == nil {
		b.WriteString("null")
		return nil
	}
	if opaque(s) {
		raw, err := json.Marshal(s)
		b.Write(raw)
		return err
	}
	start := b.Len()
	f := fields{b: b}
	b.WriteByte('{')
	f.str("$schema", s.Version)
	f.str("$id", string(s.ID))
	f.str("$anchor", s.Anchor)
	f.str("$ref", s.Ref)
	f.str("$dynamicRef", s.DynamicRef)
	f.schemaMap("$defs", s.Definitions)
	f.str("$comment", s.Comments)
	f.list("allOf", s.AllOf)
	f.list("anyOf", s.AnyOf)
	f.list("oneOf", s.OneOf)
	f.schema("not", s.Not)
	f.schema("if", s.If)
	f.schema("then", s.Then)
	f.schema("else", s.Else)
	f.schemaMap("dependentSchemas", s.DependentSchemas)
	f.list("prefixItems", s.PrefixItems)
	f.schema("items", s.Items)
	f.schema("contains", s.Contains)
	if s.Properties != nil && f.err == nil {
		f.key("properties")
		if s.Properties.Len() == 0 {
			// An empty map and a zero one encode differently; let the
			// library say which this is.
			raw, err := json.Marshal(s.Properties)
			b.Write(raw)
			f.err = err
		} else {
			inner := fields{b: b}
			b.WriteByte('{')
			for p := s.Properties.Oldest(); p != nil && inner.err == nil; p = p.Next() {
				inner.schema(p.Key, p.Value)
				if p.Value == nil {
					inner.key(p.Key)
					b.WriteString("null")
				}
			}
			b.WriteByte('}')
			f.err = inner.err
		}
	}
	f.schemaMap("patternProperties", s.PatternProperties)
	f.schema("additionalProperties", s.AdditionalProperties)
	f.schema("propertyNames", s.PropertyNames)
	f.str("type", s.Type)
	if len(s.Enum) > 0 {
		f.value("enum", s.Enum)
	}
	if s.Const != nil {
		f.value("const", s.Const)
	}
	f.number("multipleOf", s.MultipleOf)
	f.number("maximum", s.Maximum)
	f.number("exclusiveMaximum", s.ExclusiveMaximum)
	f.number("minimum", s.Minimum)
	f.number("exclusiveMinimum", s.ExclusiveMinimum)
	f.count("maxLength", s.MaxLength)
	f.count("minLength", s.MinLength)
	f.str("pattern", s.Pattern)
	f.count("maxItems", s.MaxItems)
	f.count("minItems", s.MinItems)
	f.boolean("uniqueItems", s.UniqueItems)
	f.count("maxContains", s.MaxContains)
	f.count("minContains", s.MinContains)
	f.count("maxProperties", s.MaxProperties)
	f.count("minProperties", s.MinProperties)
	if len(s.Required) > 0 {
		f.key("required")
		b.WriteByte('[')
		for i, r := range s.Required {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, r)
		}
		b.WriteByte(']')
	}
	if len(s.DependentRequired) > 0 {
		f.value("dependentRequired", s.DependentRequired)
	}
	f.str("format", s.Format)
	f.str("contentEncoding", s.ContentEncoding)
	f.str("contentMediaType", s.ContentMediaType)
	f.schema("contentSchema", s.ContentSchema)
	f.str("title", s.Title)
	f.str("description", s.Description)
	if s.Default != nil {
		f.value("default", s.Default)
	}
	f.boolean("deprecated", s.Deprecated)
	f.boolean("readOnly", s.ReadOnly)
	f.boolean("writeOnly", s.WriteOnly)
	if len(s.Examples) > 0 {
		f.value("examples", s.Examples)
	}
	if f.err != nil {
		return f.err
	}
	b.WriteByte('}')
	if len(s.Extras) > 0 {
		extras, err := json.Marshal(s.Extras)
		if err != nil {
			return err
		}
		if b.Len()-start == 2 { // "{}": the extras alone
			b.Truncate(start)
			b.Write(extras)
		} else {
			b.Truncate(b.Len() - 1)
			b.WriteByte(',')
			b.Write(extras[1:])
		}
	}
	return nil
}

// writeString writes s as a JSON string as encoding/json does (HTML
// characters escaped): directly when it holds only plain printable ASCII,
// through encoding/json otherwise.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s)
			b.Write(raw)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}
