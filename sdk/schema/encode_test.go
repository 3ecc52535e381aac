package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/invopop/jsonschema"
)

type encInner struct {
	Code  string   `json:"code" jsonschema:"enum=a,enum=b&c,description=A <code> & more"`
	Score *float64 `json:"score,omitempty" jsonschema:"minimum=0.5,exclusiveMaximum=10,multipleOf=0.25"`
}

type encEmbedded struct {
	Shared string `json:"shared,omitempty" jsonschema:"title=Shared,deprecated=true"`
}

type encAll struct {
	encEmbedded
	Name     string             `json:"name" jsonschema:"minLength=1,maxLength=64,pattern=^[a-z]+$,default=x,example=abc"`
	Tags     []string           `json:"tags,omitempty" jsonschema:"minItems=1,maxItems=5,uniqueItems=true"`
	Inner    encInner           `json:"inner"`
	Ptr      *encInner          `json:"ptr,omitempty"`
	List     []encInner         `json:"list,omitempty"`
	ByName   map[string]int     `json:"by_name,omitempty"`
	ByNumber map[int]string     `json:"by_number,omitempty"`
	Any      any                `json:"any,omitempty"`
	Raw      json.RawMessage    `json:"raw,omitempty"`
	When     time.Time          `json:"when"`
	Bytes    []byte             `json:"bytes,omitempty"`
	Maybe    *string            `json:"maybe" jsonschema:"oneof_type=string;null"`
	Unicode  string             `json:"unicode,omitempty" jsonschema:"description=é \u2028 line"`
	Nested   map[string][]int64 `json:"nested,omitempty"`
	Flag     bool               `json:"flag,omitempty" jsonschema:"readOnly=true"`
	Hidden   string             `json:"-"`
}

// derived runs the library's reflection with cairn's settings.
func derived(t reflect.Type) *jsonschema.Schema {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
	s := r.ReflectFromType(t)
	applyTags(t, s, 0)
	s.Version = ""
	s.ID = ""
	return s
}

func sameEncoding(t *testing.T, what string, s *jsonschema.Schema) {
	t.Helper()
	want, werr := json.Marshal(s)
	got, gerr := marshalSchema(s)
	if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got %s (%v)\nwant %s (%v)", what, got, gerr, want, werr)
	}
}

// The one-pass encoder writes exactly what json.Marshal writes.
func TestMarshalSchemaMatchesJSONMarshal(t *testing.T) {
	t.Parallel()
	for _, v := range []any{encAll{}, encInner{}, tagged{}, amended{}, struct{}{}, []string{}, 0, ""} {
		sameEncoding(t, fmt.Sprintf("%T", v), derived(reflect.TypeOf(v)))
	}
	extra := derived(reflect.TypeOf(encInner{}))
	extra.Extras = map[string]any{"x-kind": "<b>", "x-n": 2}
	sameEncoding(t, "extras", extra)
	sameEncoding(t, "extras alone", &jsonschema.Schema{Extras: map[string]any{"x": 1}})
	sameEncoding(t, "true", jsonschema.TrueSchema)
	sameEncoding(t, "false", &jsonschema.Schema{AdditionalProperties: jsonschema.FalseSchema, Type: "object"})
	sameEncoding(t, "defs", &jsonschema.Schema{Definitions: jsonschema.Definitions{"b": {Type: "string"}, "a": jsonschema.TrueSchema}, Ref: "#/$defs/a"})
}

// Struct types drawn at random (field types, names and tags) encode the
// same both ways.
func TestMarshalSchemaRandomTypes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(14, 14))
	leaves := []reflect.Type{
		reflect.TypeOf(""), reflect.TypeOf(0), reflect.TypeOf(1.5), reflect.TypeOf(true), reflect.TypeOf([]string{}),
		reflect.TypeOf(map[string]bool{}), reflect.TypeOf((*int)(nil)), reflect.TypeOf(time.Time{}), reflect.TypeOf([]byte{}),
	}
	tags := []string{
		``, `jsonschema:"minLength=2,maxLength=9"`, `jsonschema:"enum=x,enum=y"`, `jsonschema:"minimum=1,maximum=5"`,
		`description:"Line with <html> & \"quotes\", commas"`, `pattern:"^[a-z]{1,8}$"`, `jsonschema:"title=T,description=d é"`,
		`jsonschema:"oneof_type=string;integer"`, `jsonschema:"default=3"`,
	}
	var draw func(depth int) reflect.Type
	draw = func(depth int) reflect.Type {
		n := 1 + r.IntN(5)
		var fs []reflect.StructField
		for i := 0; i < n; i++ {
			ft := leaves[r.IntN(len(leaves))]
			if depth < 2 && r.IntN(4) == 0 {
				ft = draw(depth + 1)
				if r.IntN(2) == 0 {
					ft = reflect.SliceOf(ft)
				}
			}
			name := fmt.Sprintf("f%d", i)
			omit := ""
			if r.IntN(2) == 0 {
				omit = ",omitempty"
			}
			fs = append(fs, reflect.StructField{Name: "F" + name, Type: ft, Tag: reflect.StructTag(fmt.Sprintf(`json:"%s%s" %s`, name, omit, tags[r.IntN(len(tags))]))})
		}
		return reflect.StructOf(fs)
	}
	for i := 0; i < 300; i++ {
		typ := draw(0)
		sameEncoding(t, typ.String(), derived(typ))
	}
}
