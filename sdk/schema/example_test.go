package schema_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// createArgs is a tool's input: its schema comes from the type.
type createArgs struct {
	Title    string   `json:"title" jsonschema:"minLength=1,maxLength=80"`
	Priority string   `json:"priority,omitempty" jsonschema:"enum=low,enum=high"`
	Labels   []string `json:"labels,omitempty" pattern:"^[a-z]+$"`
}

// For derives a tool's input schema from its argument type; a field
// without omitempty is required and unknown fields are refused.
func ExampleFor() {
	var s struct {
		Required             []string `json:"required"`
		AdditionalProperties bool     `json:"additionalProperties"`
	}
	_ = json.Unmarshal(schema.For[createArgs](), &s)
	fmt.Println(s.Required, s.AdditionalProperties)
	// Output: [title] false
}

// A Validator judges a call's arguments against the schema and names the
// field and the rule a bad call breaks.
func ExampleValidator() {
	v := schema.MustCompile(schema.For[createArgs]())
	for _, args := range []string{
		`{"title":"write the docs","labels":["docs"]}`,
		`{"title":""}`,
		`{"title":"a","priority":"urgent"}`,
		`{"title":"a","labels":["ok","Not OK"]}`,
		`{"title":"a","owner":"ada"}`,
	} {
		if e := v.Validate([]byte(args)); e != nil {
			fmt.Println(e.Details["field"], e.Details["constraint"])
		} else {
			fmt.Println("ok")
		}
	}
	// Output:
	// ok
	// title minLength
	// priority enum
	// labels[1] pattern
	// owner additionalProperties
}

// Validate takes the raw arguments; blank arguments are the empty object.
func ExampleValidator_Validate() {
	v := schema.MustCompile(json.RawMessage(`{"type":"object","required":["id"]}`))
	fmt.Println(v.Validate([]byte(`{"id":1}`)))
	fmt.Println(v.Validate(nil))
	fmt.Println(v.Validate([]byte(`{"id":`)).Details["constraint"])
	// Output:
	// <nil>
	// ERR_INVALID_INPUT: id is required (field id)
	// json
}

// ValidateChecked skips the validity scan for arguments rawjson.Check has
// already passed, as a server does on every call.
func ExampleValidator_ValidateChecked() {
	v := schema.MustCompile(schema.For[createArgs]())
	args := []byte(`{"title":"ship it","priority":"high"}`)
	if e := rawjson.Check(args, 0); e != nil {
		fmt.Println(e)
		return
	}
	fmt.Println(v.ValidateChecked(args))
	// Output: <nil>
}

// Compile refuses a keyword it cannot honour instead of ignoring it.
func ExampleCompile() {
	v, err := schema.Compile(json.RawMessage(`{"type":"integer","minimum":1}`))
	fmt.Println(err, v.Validate([]byte(`0`)).Details["constraint"])

	_, err = schema.Compile(json.RawMessage(`{"type":"array","contains":{"type":"string"}}`))
	why, _, _ := strings.Cut(err.Error(), " (it validates") // the rest lists what it does validate
	fmt.Println(why)
	// Output:
	// <nil> minimum
	// invalid schema: at #: keyword "contains" is not supported by cairn's schema validator
}

// MustCompile suits a schema fixed when the program is built.
func ExampleMustCompile() {
	limit := schema.MustCompile(json.RawMessage(`{"type":"string","maxLength":3}`))
	fmt.Println(limit.Validate([]byte(`"abcd"`)).Details["constraint"])
	// Output: maxLength
}

// Supported lists the keywords a schema may use.
func ExampleSupported() {
	validating, annotations := schema.Supported()
	fmt.Println(slices.Contains(validating, "pattern"), slices.Contains(annotations, "description"), slices.Contains(validating, "contains"))
	// Output: true true false
}

// Published is the output schema tools/list shows: the success object or
// the error envelope.
func ExamplePublished() {
	out, _ := schema.Published(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`))
	v := schema.MustCompile(out)
	fmt.Println(v.Validate([]byte(`{"id":"t-1"}`)))
	fmt.Println(v.Validate([]byte(`{"error":{"code":"ERR_NOT_FOUND","message":"no task","details":{}}}`)))
	fmt.Println(v.Validate([]byte(`{"id":7}`)) != nil)
	// Output:
	// <nil>
	// <nil>
	// true
}

// phaseArgs takes a phase as a name or a number, which tags cannot say.
type phaseArgs struct {
	Phase any `json:"phase"`
}

// AmendSchema makes phase a non-empty string or a number.
func (phaseArgs) AmendSchema(s map[string]any) {
	s["properties"].(map[string]any)["phase"] = map[string]any{"anyOf": []any{
		map[string]any{"type": "string", "minLength": 1},
		map[string]any{"type": "number"},
	}}
}

// An Amender finishes a derived schema by hand.
func ExampleAmender() {
	var _ schema.Amender = phaseArgs{}
	v := schema.MustCompile(schema.For[phaseArgs]())
	fmt.Println(v.Validate([]byte(`{"phase":"design"}`)), v.Validate([]byte(`{"phase":2}`)), v.Validate([]byte(`{"phase":true}`)) != nil)
	// Output: <nil> <nil> true
}
