package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// BenchmarkCompileToolSchemas compiles every registered tool's input
// schema once per iteration (what registering all tools costs), beside
// the oracle doing the same.
func BenchmarkCompileToolSchemas(b *testing.B) {
	var inputs [][]byte
	for name, raw := range toolSchemas(b) {
		if len(name) > 6 && name[len(name)-6:] == " input" {
			inputs = append(inputs, raw)
		}
	}
	b.Run("cairn", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range inputs {
				if _, err := Compile(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("oracle", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range inputs {
				if _, err := compileOracle(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkValidate validates one typical call's arguments.
func BenchmarkValidate(b *testing.B) {
	raw := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["title"],"properties":{"title":{"type":"string","minLength":1,"maxLength":256},"priority":{"enum":["low","normal","high"]},"labels":{"type":"array","maxItems":20,"items":{"type":"string","pattern":"^[a-z0-9-]{1,32}$"}},"estimate":{"type":"integer","minimum":0,"maximum":1000}}}`)
	doc := []byte(`{"title":"Write the validator","priority":"high","labels":["schema","perf"],"estimate":8}`)
	v := MustCompile(raw)
	o, err := compileOracle(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cairn", func(b *testing.B) {
		for b.Loop() {
			if e := v.Validate(doc); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("oracle", func(b *testing.B) {
		for b.Loop() {
			if c, _ := o.validate(doc); c != nil {
				b.Fatal(c[0])
			}
		}
	})
}

// BenchmarkForType derives a schema with nested structs, as AddTool does
// for every tool; json.Marshal beside it is what ForType did before.
func BenchmarkForType(b *testing.B) {
	t := reflect.TypeOf(encAll{})
	b.Run("ForType", func(b *testing.B) {
		for b.Loop() {
			forType(t)
		}
	})
	b.Run("reflect+json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(derived(t)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
