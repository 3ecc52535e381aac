package schema

import (
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/text/message"
)

// violation is one broken rule. keyword names it ("" when the rule is the
// schema itself, such as false or not); rule states it in the validator's
// terse form (the error's "rule" detail).
type violation interface {
	keyword() string
	rule(p *message.Printer) string
}

// The nodes of a violation tree that only group others; never a leaf.
type (
	groupKind struct{} // several violations of one schema
	refKind   struct{} // what $ref's target found
	allOfKind struct{}
	anyOfKind struct{}
)

func (groupKind) keyword() string                { return "" }
func (groupKind) rule(p *message.Printer) string { return p.Sprintf("validation failed") }
func (refKind) keyword() string                  { return "$ref" }
func (refKind) rule(p *message.Printer) string   { return p.Sprintf("validation failed") }
func (allOfKind) keyword() string                { return "allOf" }
func (allOfKind) rule(p *message.Printer) string { return p.Sprintf("'allOf' failed") }
func (anyOfKind) keyword() string                { return "anyOf" }
func (anyOfKind) rule(p *message.Printer) string { return p.Sprintf("'anyOf' failed") }

type falseSchema struct{}

func (falseSchema) keyword() string                { return "" }
func (falseSchema) rule(p *message.Printer) string { return p.Sprintf("false schema") }

type invalidValue struct{ v any }

func (invalidValue) keyword() string                  { return "" }
func (k invalidValue) rule(p *message.Printer) string { return p.Sprintf("invalid jsonType %T", k.v) }

type notFailed struct{}

func (notFailed) keyword() string                { return "" }
func (notFailed) rule(p *message.Printer) string { return p.Sprintf("'not' failed") }

// oneOfFailed: none of the schemas matched (matched nil, a group over
// their violations) or two did (a leaf naming them).
type oneOfFailed struct{ matched []int }

func (oneOfFailed) keyword() string { return "oneOf" }
func (k oneOfFailed) rule(p *message.Printer) string {
	if len(k.matched) == 0 {
		return p.Sprintf("'oneOf' failed, none matched")
	}
	return p.Sprintf("'oneOf' failed, subschemas %d, %d matched", k.matched[0], k.matched[1])
}

type typeMismatch struct {
	got  string
	want []string
}

func (typeMismatch) keyword() string { return "type" }
func (k typeMismatch) rule(p *message.Printer) string {
	return p.Sprintf("got %s, want %s", k.got, strings.Join(k.want, " or "))
}

type constFailed struct{ got, want any }

func (constFailed) keyword() string { return "const" }
func (k constFailed) rule(p *message.Printer) string {
	switch k.want.(type) {
	case []any, map[string]any:
		return p.Sprintf("'const' failed")
	}
	return p.Sprintf("value must be %s", display(k.want))
}

type enumFailed struct {
	got  any
	want []any
}

func (enumFailed) keyword() string { return "enum" }
func (k enumFailed) rule(p *message.Printer) string {
	for _, item := range k.want {
		switch item.(type) {
		case []any, map[string]any:
			return p.Sprintf("'enum' failed")
		}
	}
	if len(k.want) == 1 {
		return p.Sprintf("value must be %s", display(k.want[0]))
	}
	want := make([]string, len(k.want))
	for i, v := range k.want {
		want[i] = display(v)
	}
	return p.Sprintf("value must be one of %s", strings.Join(want, ", "))
}

// countFailed: a length, item count or property count out of bounds
// (minLength, maxLength, minItems, maxItems, minProperties, maxProperties).
type countFailed struct {
	kw        string
	got, want int
}

func (k countFailed) keyword() string { return k.kw }
func (k countFailed) rule(p *message.Printer) string {
	return p.Sprintf("%s: got %d, want %d", k.kw, k.got, k.want)
}

// boundFailed: a number out of bounds (minimum, maximum,
// exclusiveMinimum, exclusiveMaximum) or not a multiple (multipleOf).
type boundFailed struct {
	kw        string
	got, want *big.Rat
}

func (k boundFailed) keyword() string { return k.kw }
func (k boundFailed) rule(p *message.Printer) string {
	got, _ := k.got.Float64()
	want, _ := k.want.Float64()
	return p.Sprintf("%s: got %v, want %v", k.kw, got, want)
}

type requiredFailed struct{ missing []string }

func (requiredFailed) keyword() string { return "required" }
func (k requiredFailed) rule(p *message.Printer) string {
	if len(k.missing) == 1 {
		return p.Sprintf("missing property %s", quote(k.missing[0]))
	}
	return p.Sprintf("missing properties %s", joinQuoted(k.missing))
}

// additionalFailed: props are the unknown members; known are the
// properties the schema names, to suggest the one meant.
type additionalFailed struct{ props, known []string }

func (additionalFailed) keyword() string { return "additionalProperties" }
func (k additionalFailed) rule(p *message.Printer) string {
	return p.Sprintf("additional properties %s not allowed", joinQuoted(k.props))
}

type uniqueFailed struct{ first, again int }

func (uniqueFailed) keyword() string { return "uniqueItems" }
func (k uniqueFailed) rule(p *message.Printer) string {
	return p.Sprintf("items at %d and %d are equal", k.first, k.again)
}

type patternFailed struct{ got, want string }

func (patternFailed) keyword() string { return "pattern" }
func (k patternFailed) rule(p *message.Printer) string {
	return p.Sprintf("%s does not match pattern %s", quote(k.got), quote(k.want))
}

// quote single-quotes s as the rules show strings.
func quote(s string) string {
	s = fmt.Sprintf("%q", s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func joinQuoted(arr []string) string {
	q := make([]string, len(arr))
	for i, s := range arr {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}

// display shows a primitive value in a rule.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	}
	return fmt.Sprintf("%v", v)
}
