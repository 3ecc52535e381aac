package schema

import (
	"fmt"
	"strings"
	"testing"
)

// Every keyword, with the exact refusal it gives: the field, the
// constraint, the message and the rule.
func TestKeywordRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, schema, doc string
		field, constraint string
		message, rule     string // "" rule: no rule detail
	}{
		{"valid", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"}`, "", "", "", ""},
		{"type", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`,
			"a", "type", "a must be of type string (got number)", "got number, want string"},
		{"type list", `{"type":["string","null"]}`, `true`,
			"", "type", "the arguments object must be of type null or string (got boolean)", "got boolean, want null or string"},
		{"integer accepts 1.0", `{"type":"integer"}`, `1.0`, "", "", "", ""},
		{"integer refuses 1.5", `{"type":"integer"}`, `1.5`,
			"", "type", "the arguments object must be of type integer (got number)", "got number, want integer"},
		{"enum", `{"properties":{"p":{"enum":["low","high",2]}}}`, `{"p":"mid"}`,
			"p", "enum", "p must be one of low, high, 2 (got mid)", "value must be one of 'low', 'high', 2"},
		{"enum one", `{"properties":{"p":{"enum":["low"]}}}`, `{"p":1}`,
			"p", "enum", "p must be one of low (got 1)", "value must be 'low'"},
		{"enum numbers by value", `{"enum":[1,2]}`, `2.0`, "", "", "", ""},
		{"const", `{"properties":{"k":{"const":"x"}}}`, `{"k":"y"}`,
			"k", "const", "k: value must be 'x'", "value must be 'x'"},
		{"const object", `{"const":{"a":[1]}}`, `{"a":[2]}`,
			"", "const", "the arguments object: 'const' failed", "'const' failed"},
		{"minimum", `{"properties":{"n":{"minimum":1}}}`, `{"n":0.5}`,
			"n", "minimum", "n must be at least 1 (got 0.5)", "minimum: got 0.5, want 1"},
		{"maximum", `{"properties":{"n":{"maximum":1000}}}`, `{"n":1234567}`,
			"n", "maximum", "n must be at most 1000 (got 1234567)", "maximum: got 1.234567×10⁰⁶, want 1,000"},
		{"exclusiveMinimum", `{"properties":{"n":{"exclusiveMinimum":0}}}`, `{"n":0}`,
			"n", "exclusiveMinimum", "n must be greater than 0 (got 0)", "exclusiveMinimum: got 0, want 0"},
		{"exclusiveMaximum", `{"properties":{"n":{"exclusiveMaximum":10}}}`, `{"n":10}`,
			"n", "exclusiveMaximum", "n must be less than 10 (got 10)", "exclusiveMaximum: got 10, want 10"},
		{"multipleOf", `{"properties":{"n":{"multipleOf":0.1}}}`, `{"n":0.35}`,
			"n", "multipleOf", "n: multipleOf: got 0.35, want 0.1", "multipleOf: got 0.35, want 0.1"},
		{"multipleOf exact", `{"multipleOf":0.1}`, `0.3`, "", "", "", ""},
		{"minLength counts code points", `{"properties":{"s":{"minLength":4}}}`, `{"s":"ééé"}`,
			"s", "minLength", "s must be at least 4 characters long (got 3)", "minLength: got 3, want 4"},
		{"maxLength", `{"properties":{"s":{"maxLength":2}}}`, `{"s":"ééé"}`,
			"s", "maxLength", "s must be at most 2 characters long (got 3)", "maxLength: got 3, want 2"},
		{"maxLength grouping", `{"maxLength":1000}`, `"` + strings.Repeat("x", 1500) + `"`,
			"", "maxLength", "the arguments object must be at most 1000 characters long (got 1500)", "maxLength: got 1,500, want 1,000"},
		{"pattern", `{"properties":{"id":{"pattern":"^T-[0-9]+$"}}}`, `{"id":"x\"y"}`,
			"id", "pattern", `id must match the pattern ^T-[0-9]+$ (got "x\"y")`, `'x"y' does not match pattern '^T-[0-9]+$'`},
		{"pattern unanchored", `{"pattern":"b"}`, `"abc"`, "", "", "", ""},
		{"minItems", `{"properties":{"l":{"minItems":2}}}`, `{"l":[1]}`,
			"l", "minItems", "l must have at least 2 items (got 1)", "minItems: got 1, want 2"},
		{"maxItems", `{"properties":{"l":{"maxItems":1}}}`, `{"l":[1,2]}`,
			"l", "maxItems", "l must have at most 1 items (got 2)", "maxItems: got 2, want 1"},
		{"uniqueItems", `{"properties":{"l":{"uniqueItems":true}}}`, `{"l":[1,2,1.0]}`,
			"l", "uniqueItems", "l must not repeat items (items 0 and 2 are equal)", "items at 0 and 2 are equal"},
		{"uniqueItems long", `{"uniqueItems":true}`, `[` + strings.Repeat(`{"a":1},`, 0) + `0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,{"b":[1]},{"b":[1.0]}]`,
			"", "uniqueItems", "the arguments object must not repeat items (items 21 and 22 are equal)", "items at 21 and 22 are equal"},
		{"minProperties", `{"minProperties":2}`, `{"a":1}`,
			"", "minProperties", "the arguments object: minProperties: got 1, want 2", "minProperties: got 1, want 2"},
		{"maxProperties", `{"properties":{"o":{"maxProperties":1}}}`, `{"o":{"a":1,"b":2}}`,
			"o", "maxProperties", "o: maxProperties: got 2, want 1", "maxProperties: got 2, want 1"},
		{"required names the first missing by name", `{"required":["zeta","alpha"]}`, `{}`,
			"alpha", "required", "alpha is required", ""},
		{"required nested", `{"properties":{"o":{"required":["x"]}}}`, `{"o":{}}`,
			"o.x", "required", "o.x is required", ""},
		{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"zz":2,"bb":3}`,
			"bb", "additionalProperties", "bb is not a known argument; remove it or check its spelling", ""},
		{"additionalProperties names the closest known", `{"properties":{"keyPath":{},"kind":{}},"additionalProperties":false}`, `{"key":1}`,
			"key", "additionalProperties", "key is not a known argument; did you mean keyPath?", ""},
		{"additionalProperties nested suggestion", `{"properties":{"o":{"properties":{"title":{}},"additionalProperties":false}}}`, `{"o":{"titel":1}}`,
			"o.titel", "additionalProperties", "o.titel is not a known argument; did you mean o.title?", ""},
		{"additionalProperties suggestion through $ref", `{"$defs":{"t":{"properties":{"task_id":{}},"additionalProperties":false}},"properties":{"x":{"$ref":"#/$defs/t"}}}`, `{"x":{"taskId":1}}`,
			"x.taskId", "additionalProperties", "x.taskId is not a known argument; did you mean x.task_id?", ""},
		{"additionalProperties schema", `{"additionalProperties":{"type":"integer"}}`, `{"n":"x"}`,
			"n", "type", "n must be of type integer (got string)", "got string, want integer"},
		{"patternProperties", `{"patternProperties":{"^[0-9]+$":{"type":"string"}},"additionalProperties":false}`, `{"1":"a","2":3}`,
			"[2]", "type", "[2] must be of type string (got number)", "got number, want string"},
		{"items path", `{"properties":{"labels":{"items":{"maxLength":3}}}}`, `{"labels":["a","b","c","long"]}`,
			"labels[3]", "maxLength", "labels[3] must be at most 3 characters long (got 4)", "maxLength: got 4, want 3"},
		{"prefixItems", `{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, `["a",2,3]`,
			"[2]", "schema", "[2]: false schema", "false schema"},
		{"prefixItems type", `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `["a","b"]`,
			"[1]", "type", "[1] must be of type integer (got string)", "got string, want integer"},
		{"deepest wins", `{"properties":{"a":{"properties":{"b":{"type":"string"}}}},"required":["c"]}`, `{"a":{"b":1}}`,
			"a.b", "type", "a.b must be of type string (got number)", "got number, want string"},
		{"anyOf", `{"properties":{"v":{"anyOf":[{"type":"string","minLength":1},{"type":"number"}]}}}`, `{"v":""}`,
			"v", "minLength", "v must be at least 1 characters long (got 0)", "minLength: got 0, want 1"},
		{"oneOf none", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `true`,
			"", "type", "the arguments object must be of type string (got boolean)", "got boolean, want string"},
		{"oneOf two", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3`,
			"", "oneOf", "the arguments object: 'oneOf' failed, subschemas 0, 1 matched", "'oneOf' failed, subschemas 0, 1 matched"},
		{"allOf", `{"allOf":[{"minLength":2},{"maxLength":3}]}`, `"abcd"`,
			"", "maxLength", "the arguments object must be at most 3 characters long (got 4)", "maxLength: got 4, want 3"},
		{"not", `{"properties":{"x":{"not":{"type":"string"}}}}`, `{"x":"s"}`,
			"x", "schema", "x: 'not' failed", "'not' failed"},
		{"$ref", `{"$defs":{"id":{"type":"string","pattern":"^T-"}},"properties":{"id":{"$ref":"#/$defs/id"}}}`, `{"id":"x"}`,
			"id", "pattern", "id must match the pattern ^T- (got \"x\")", "'x' does not match pattern '^T-'"},
		{"$ref recursive", `{"$defs":{"n":{"properties":{"kids":{"items":{"$ref":"#/$defs/n"}},"v":{"type":"integer"}}}},"$ref":"#/$defs/n"}`, `{"kids":[{"kids":[{"v":"x"}]}]}`,
			"kids[0].kids[0].v", "type", "kids[0].kids[0].v must be of type integer (got string)", "got string, want integer"},
		{"false schema", `false`, `{}`, "", "schema", "the arguments object: false schema", "false schema"},
		{"format is an annotation", `{"format":"date-time"}`, `"yesterday"`, "", "", "", ""},
		{"empty document is {}", `{"required":["a"]}`, ``, "a", "required", "a is required", ""},
		{"not JSON", `{}`, `{"a":`, "", "json", "arguments are not valid JSON: unexpected EOF", ""},
		{"trailing data", `{}`, `{} x`, "", "json", "arguments are not valid JSON: invalid character after top-level value", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Compile([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			// The refusal is the one the validator cairn used before gave.
			o, err := compileOracle([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			if d := compareOne(v, o, []byte(c.doc)); d != "" {
				t.Error(d)
			}
			e := v.Validate([]byte(c.doc))
			if c.constraint == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil {
				t.Fatal("accepted")
			}
			// The suggestion detail is the name the message suggests.
			_, meant, suggests := strings.Cut(strings.TrimSuffix(c.message, "?"), "did you mean ")
			if got, has := e.Details["suggestion"]; has != suggests || (has && got != meant) {
				t.Errorf("suggestion detail %v (present %v), want %q (present %v)", got, has, meant, suggests)
			}
			rule, hasRule := e.Details["rule"]
			if e.Code != "ERR_INVALID_INPUT" || e.Status != 400 || e.Details["field"] != c.field || e.Details["constraint"] != c.constraint ||
				e.Message != c.message || hasRule != (c.rule != "") || (hasRule && rule != c.rule) {
				t.Errorf("got %s %d field=%q constraint=%q message=%q rule=%q\nwant field=%q constraint=%q message=%q rule=%q",
					e.Code, e.Status, e.Details["field"], e.Details["constraint"], e.Message, rule, c.field, c.constraint, c.message, c.rule)
			}
		})
	}
}

// A schema the validator cannot honour exactly is refused when compiled,
// saying where and why.
func TestCompileRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, want string }{
		{`{"type":"array","contains":{}}`, `at #: keyword "contains" is not supported by cairn's schema validator`},
		{`{"properties":{"a":{"if":{},"then":{}}}}`, `at #/properties/a: keyword "if" is not supported`},
		{`{"propertyNames":{"maxLength":3}}`, `keyword "propertyNames" is not supported`},
		{`{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, `at #/properties/a/$schema: $schema is accepted only at the schema's root`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, `$schema http://json-schema.org/draft-07/schema# is not supported`},
		{`{"type":"text"}`, `at #/type: type text is not one of null, boolean, number, integer, string, array, object`},
		{`{"type":["string","string"]}`, `type names string twice`},
		{`{"type":[]}`, `type must name at least one type`},
		{`{"minLength":-1}`, `at #/minLength: minLength must be a non-negative integer (got -1)`},
		{`{"maxItems":1.5}`, `maxItems must be a non-negative integer (got 1.5)`},
		{`{"minimum":"1"}`, `minimum must be a number (got string)`},
		{`{"multipleOf":0}`, `multipleOf must be greater than 0`},
		{`{"pattern":"(?<x"}`, `pattern "(?<x" is not a valid regular expression (Go RE2 syntax)`},
		{`{"pattern":"(?=a)"}`, `is not a valid regular expression`},
		{`{"required":["a","a"]}`, `required names "a" twice`},
		{`{"required":"a"}`, `required must be an array of property names`},
		{`{"enum":"a"}`, `enum must be an array`},
		{`{"anyOf":[]}`, `anyOf must be a non-empty array of schemas`},
		{`{"properties":{"a":1}}`, `at #/properties/a: a schema must be an object or a boolean (got number)`},
		{`{"uniqueItems":"yes"}`, `uniqueItems must be a boolean`},
		{`{"description":3}`, `description must be a string (got number)`},
		{`{"$ref":"other.json#/a"}`, `$ref "other.json#/a" is not supported: only references within the schema`},
		{`{"$ref":"#/$defs/missing"}`, `$ref "#/$defs/missing" points at no schema in this document`},
		{`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `refers to itself`},
		{`{"$ref":"#"}`, `refers to itself`},
		{`[1]`, `a schema must be an object or a boolean (got array)`},
		{`{"a":`, `schema is not valid JSON: unexpected EOF`},
	} {
		_, err := Compile([]byte(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.schema, err, c.want)
		}
	}
	for _, ok := range []string{
		`true`, `{}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.com/s","title":"t","$comment":"c"}`,
		`{"type":"string","format":"email","contentEncoding":"base64","contentMediaType":"text/plain","default":"x","examples":["a"],"deprecated":true,"readOnly":true,"writeOnly":false}`,
		`{"definitions":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/a"}}}`,
		`{"$defs":{"a/b":{"type":"string"}},"$ref":"#/$defs/a~1b"}`,
		`{"$defs":{"tree":{"properties":{"kids":{"items":{"$ref":"#/$defs/tree"}}}}},"$ref":"#/$defs/tree"}`,
	} {
		if _, err := Compile([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Supported lists every keyword Compile accepts and nothing else.
func TestSupportedKeywords(t *testing.T) {
	t.Parallel()
	valid, notes := Supported()
	for _, k := range append(valid, notes...) {
		if _, err := Compile([]byte(fmt.Sprintf(`{%q:%s}`, k, sampleValue(k)))); err != nil {
			t.Errorf("%s listed as supported: %v", k, err)
		}
	}
	if len(valid) != 29 || len(notes) != 13 {
		t.Errorf("%d validation keywords and %d annotations, want 29 and 13: %v %v", len(valid), len(notes), valid, notes)
	}
}

func sampleValue(k string) string {
	switch k {
	case "type":
		return `"string"`
	case "enum", "examples", "required":
		return `[]`
	case "properties", "patternProperties", "$defs", "definitions", "items", "additionalProperties", "not":
		return `{}`
	case "prefixItems", "allOf", "anyOf", "oneOf":
		return `[{}]`
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		return `true`
	case "$ref":
		return `"#/$defs/x","$defs":{"x":{}}`
	case "$schema":
		return `"https://json-schema.org/draft/2020-12/schema"`
	case "pattern", "title", "description", "$comment", "format", "contentEncoding", "contentMediaType", "$id":
		return `"x"`
	}
	return `1`
}
