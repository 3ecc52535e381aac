package schema

import (
	"strings"
	"testing"
)

// A document is judged the same whether decoded whole or only as far as
// its schema looks.
func TestValidateDecodesOnlyWhatTheSchemaReads(t *testing.T) {
	t.Parallel()
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"string","maxLength":3},"v":{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"}]}},"required":["a"],"additionalProperties":false}`,
		`{"type":"object","properties":{"l":{"type":"array","maxItems":2,"items":{"type":"string","minLength":1}}},"patternProperties":{"^x":{"type":"integer"}},"additionalProperties":{"type":"boolean"}}`,
		`{"type":"object","properties":{"e":{"enum":[[1,2],{"k":"v"}]},"u":{"type":"array","uniqueItems":true},"o":{"oneOf":[{"type":"array"},{"type":"object","required":["k"]}]}}}`,
		`{"type":"array","prefixItems":[{"type":"string"},{"type":"object","properties":{"n":{"type":"integer","minimum":2}}}],"items":{"type":"null"}}`,
	}
	docs := []string{
		`{"a":"abc","v":{"deep":[1,2,{"x":"y"}]}}`, `{"a":"abcd","v":[1]}`, `{"v":true}`, `{"a":"x","b":1}`, `{"a":"x","a":"toolong"}`,
		`{"l":["a","b"],"x1":2,"x2":2.5,"z":true,"y":"no"}`, `{"l":["a",""]}`, `{"l":["a","b","c"]}`, `{"x":"1"}`,
		`{"e":[1,2]}`, `{"e":{"k":"w"}}`, `{"u":[{"a":1},{"a":1}]}`, `{"o":{"k":1}}`, `{"o":{}}`, `{"o":[]}`,
		`["s",{"n":1}]`, `["s",{"n":3},null,null]`, `[1]`, `["s",{"n":3},0]`, `"s"`, ` {"a" : "ab" , "v" : "\u00e9\"" } `,
	}
	for i, raw := range schemas {
		v := MustCompile([]byte(raw))
		for _, doc := range docs {
			inst, err := decodeJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			got, want := showError(v.Validate([]byte(doc))), showError(v.validateValue(inst))
			if got != want {
				t.Errorf("schema %d, doc %s: got %s, decoded whole %s", i, doc, got, want)
			}
		}
	}
}

// A large value that the schema admits whatever it holds is not decoded:
// validating it allocates next to nothing.
func TestValidateSkipsWhatNoRuleReads(t *testing.T) {
	v := MustCompile([]byte(`{"type":"object","properties":{"k":{"type":"string"},"value":{"anyOf":[{"type":"object"},{"type":"array"}]}}}`))
	doc := []byte(`{"k":"key","value":[` + strings.Repeat(`0,{"a":"b"},`, 100_000) + `0]}`)
	allocs := testing.AllocsPerRun(3, func() {
		if e := v.Validate(doc); e != nil {
			t.Fatal(e)
		}
	})
	if allocs > 50 {
		t.Errorf("validating a skipped value allocated %.0f times", allocs)
	}
}
