// Package schema derives JSON Schemas from Go types and validates JSON
// documents against them, turning the first violation into a typed
// ERR_INVALID_INPUT error that names the field and the rule.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cairn-mcp/cairn/sdk/errs"
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
	return ForType(reflect.TypeOf(&zero).Elem())
}

// ForType is For with a reflect.Type.
func ForType(t reflect.Type) json.RawMessage {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Map {
		return json.RawMessage(`{"type":"object"}`)
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
	s := r.ReflectFromType(t)
	applyTags(t, s, 0)
	s.Version = ""
	s.ID = ""
	raw, err := json.Marshal(s)
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

// Validator checks JSON documents against one compiled schema.
type Validator struct {
	schema *sjs.Schema
}

// Compile compiles a JSON Schema (draft 2020-12 unless $schema says
// otherwise).
func Compile(raw json.RawMessage) (*Validator, error) {
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(sjs.Draft2020)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return &Validator{schema: s}, nil
}

// MustCompile is Compile that panics, for schemas fixed at build time.
func MustCompile(raw json.RawMessage) *Validator {
	v, err := Compile(raw)
	if err != nil {
		panic(err)
	}
	return v
}

// Validate checks a JSON document. It returns nil or an *errs.Error with
// code ERR_INVALID_INPUT whose details name the field (a path such as
// "labels[3]" or "title"; "" for the document itself) and the constraint
// (the JSON Schema keyword, such as "maxLength" or "required").
func (v *Validator) Validate(doc []byte) *errs.Error {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return errs.Invalid("", "json", "arguments are not valid JSON: "+err.Error())
	}
	return v.ValidateValue(inst)
}

// ValidateValue is Validate for an already decoded value (as produced by
// encoding/json with UseNumber, or sjs.UnmarshalJSON).
func (v *Validator) ValidateValue(inst any) *errs.Error {
	err := v.schema.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return errs.Invalid("", "schema", err.Error())
	}
	return describe(ve)
}

var printer = message.NewPrinter(language.English)

// describe picks the most specific violation: the deepest leaf, preferring
// the first in document order so the message is stable.
func describe(ve *sjs.ValidationError) *errs.Error {
	leaf := deepest(ve)
	field := pointerToField(leaf.InstanceLocation)
	constraint := keyword(leaf)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		missing := append([]string(nil), k.Missing...)
		sort.Strings(missing)
		if len(missing) > 0 {
			field = joinField(field, missing[0])
		}
		return errs.Invalidf(field, "required", "%s is required", displayField(field))
	case *kind.AdditionalProperties:
		props := append([]string(nil), k.Properties...)
		sort.Strings(props)
		if len(props) > 0 {
			field = joinField(field, props[0])
		}
		return errs.Invalidf(field, "additionalProperties", "%s is not a known argument; remove it or check its spelling", displayField(field))
	}
	return errs.Invalid(field, constraint, advice(displayField(field), leaf.ErrorKind)).With("rule", leaf.ErrorKind.LocalizedString(printer))
}

// advice phrases a violation as something to fix.
func advice(f string, k sjs.ErrorKind) string {
	rat := func(r *big.Rat) string { return strings.TrimSuffix(strings.TrimRight(r.FloatString(6), "0"), ".") }
	switch k := k.(type) {
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long (got %d)", f, k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long (got %d)", f, k.Want, k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d items (got %d)", f, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d items (got %d)", f, k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s (got %s)", f, rat(k.Want), rat(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s (got %s)", f, rat(k.Want), rat(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s (got %s)", f, rat(k.Want), rat(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s (got %s)", f, rat(k.Want), rat(k.Got))
	case *kind.Enum:
		var vals []string
		for _, v := range k.Want {
			vals = append(vals, fmt.Sprint(v))
		}
		return fmt.Sprintf("%s must be one of %s (got %v)", f, strings.Join(vals, ", "), k.Got)
	case *kind.Type:
		return fmt.Sprintf("%s must be of type %s (got %s)", f, strings.Join(k.Want, " or "), k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("%s must match the pattern %s (got %q)", f, k.Want, k.Got)
	case *kind.Format:
		return fmt.Sprintf("%s must be a valid %s (got %v)", f, k.Want, k.Got)
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat items (items %d and %d are equal)", f, k.Duplicates[0], k.Duplicates[1])
	}
	return f + ": " + k.LocalizedString(printer)
}

func deepest(ve *sjs.ValidationError) *sjs.ValidationError {
	best, bestDepth := ve, -1
	var walk func(e *sjs.ValidationError, depth int)
	walk = func(e *sjs.ValidationError, depth int) {
		if len(e.Causes) == 0 {
			d := len(e.InstanceLocation)*100 + depth
			if d > bestDepth {
				best, bestDepth = e, d
			}
			return
		}
		for _, c := range e.Causes {
			walk(c, depth+1)
		}
	}
	walk(ve, 0)
	return best
}

func keyword(e *sjs.ValidationError) string {
	path := e.ErrorKind.KeywordPath()
	if len(path) == 0 {
		return "schema"
	}
	return path[len(path)-1]
}

// pointerToField renders ["labels","3"] as labels[3] and ["a","b"] as a.b.
func pointerToField(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func joinField(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func displayField(f string) string {
	if f == "" {
		return "the arguments object"
	}
	return f
}
