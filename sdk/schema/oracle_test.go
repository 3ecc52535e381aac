package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// oracle is the validator cairn used before its own: santhosh-tekuri's
// jsonschema, with the error reporting cairn built on it. The differential
// tests hold the new validator to it.
type oracle struct {
	s   *sjs.Schema
	doc any // the schema as decoded, to find an object's known properties
}

func compileOracle(raw []byte) (*oracle, error) {
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(sjs.Draft2020)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, err
	}
	return &oracle{s: s, doc: doc}, nil
}

// validate returns nil when the document is valid, else every error the
// old reporting could have given: santhosh-tekuri walks an object's
// members in Go map order, so among violations equally deep it picked one
// at random. parseErr is set when the document is not JSON.
func (o *oracle) validate(doc []byte) (candidates []*errs.Error, parseErr string) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err.Error()
	}
	err = o.s.Validate(inst)
	if err == nil {
		return nil, ""
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return []*errs.Error{errs.Invalid("", "schema", err.Error())}, ""
	}
	for _, leaf := range oracleDeepest(ve) {
		candidates = append(candidates, o.describe(leaf))
	}
	return candidates, ""
}

var oraclePrinter = message.NewPrinter(language.English)

// oracleDeepest is every leaf that could have been reported.
func oracleDeepest(ve *sjs.ValidationError) []*sjs.ValidationError {
	var best []*sjs.ValidationError
	bestDepth := -1
	var walk func(e *sjs.ValidationError, depth int)
	walk = func(e *sjs.ValidationError, depth int) {
		if len(e.Causes) == 0 {
			d := len(e.InstanceLocation)*100 + depth
			switch {
			case d > bestDepth:
				best, bestDepth = []*sjs.ValidationError{e}, d
			case d == bestDepth:
				best = append(best, e)
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

// describe is oracleDescribe with an unknown argument's suggestion, which
// the old reporting lacked: drawn from the properties at the schema
// location the oracle reports.
func (o *oracle) describe(leaf *sjs.ValidationError) *errs.Error {
	k, ok := leaf.ErrorKind.(*kind.AdditionalProperties)
	if !ok {
		return oracleDescribe(leaf)
	}
	props := append([]string(nil), k.Properties...)
	sort.Strings(props)
	var known []string
	if obj, ok := o.at(leaf.SchemaURL).(map[string]any); ok {
		if p, ok := obj["properties"].(map[string]any); ok {
			for name := range p {
				known = append(known, name)
			}
		}
	}
	return unknownArgument(pointerToField(leaf.InstanceLocation), props[0], known)
}

// at resolves the JSON pointer in a schema location
// ("mem://schema.json#/properties/o") within the decoded schema.
func (o *oracle) at(url string) any {
	_, ptr, _ := strings.Cut(url, "#")
	v := o.doc
	if ptr == "" {
		return v
	}
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func oracleDescribe(leaf *sjs.ValidationError) *errs.Error {
	field := pointerToField(leaf.InstanceLocation)
	constraint := "schema"
	if path := leaf.ErrorKind.KeywordPath(); len(path) > 0 {
		constraint = path[len(path)-1]
	}
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		missing := append([]string(nil), k.Missing...)
		sort.Strings(missing)
		field = joinField(field, missing[0])
		return errs.Invalidf(field, "required", "%s is required", displayField(field))
	case *kind.AdditionalProperties:
		props := append([]string(nil), k.Properties...)
		sort.Strings(props)
		field = joinField(field, props[0])
		return errs.Invalidf(field, "additionalProperties", "%s is not a known argument; remove it or check its spelling", displayField(field))
	}
	return errs.Invalid(field, constraint, oracleAdvice(displayField(field), leaf.ErrorKind)).With("rule", leaf.ErrorKind.LocalizedString(oraclePrinter))
}

func oracleAdvice(f string, k sjs.ErrorKind) string {
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
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat items (items %d and %d are equal)", f, k.Duplicates[0], k.Duplicates[1])
	}
	return f + ": " + k.LocalizedString(oraclePrinter)
}

// sameError compares two refusals field by field.
func sameError(a, b *errs.Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Code != b.Code || a.Message != b.Message || a.Status != b.Status || len(a.Details) != len(b.Details) {
		return false
	}
	for k, v := range a.Details {
		if fmt.Sprint(b.Details[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func showError(e *errs.Error) string {
	if e == nil {
		return "<valid>"
	}
	d, _ := json.Marshal(e.Details)
	return fmt.Sprintf("%s %q %s", e.Code, e.Message, d)
}

// compareOne validates doc with both validators and describes the first
// difference ("" when they agree).
func compareOne(v *Validator, o *oracle, doc []byte) string {
	got := v.Validate(doc)
	cands, parseErr := o.validate(doc)
	if parseErr != "" {
		want := errs.Invalid("", "json", "arguments are not valid JSON: "+parseErr)
		if !sameError(got, want) {
			return fmt.Sprintf("doc %s: got %s, want %s", doc, showError(got), showError(want))
		}
		return ""
	}
	if cands == nil {
		if got != nil {
			return fmt.Sprintf("doc %s: got %s, want valid", doc, showError(got))
		}
		return ""
	}
	for _, c := range cands {
		if sameError(got, c) {
			return ""
		}
	}
	var want []string
	for _, c := range cands {
		want = append(want, showError(c))
	}
	return fmt.Sprintf("doc %s: got %s, want one of\n\t%s", doc, showError(got), strings.Join(want, "\n\t"))
}
