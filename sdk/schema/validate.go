package schema

import (
	"bytes"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Validate checks a JSON document. It returns nil or an *errs.Error with
// code ERR_INVALID_INPUT whose details name the field (a path such as
// "labels[3]" or "title"; "" for the document itself) and the constraint
// (the JSON Schema keyword, such as "maxLength" or "required").
func (v *Validator) Validate(doc []byte) *errs.Error {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	// Valid JSON is decoded only as far as the schema looks (decodeFor);
	// anything else is decoded as before, for the same error.
	decode := decodeJSON
	if json.Valid(doc) {
		decode = func(doc []byte) (any, error) { return decodeFor(v.root, doc) }
	}
	inst, err := decode(doc)
	if err != nil {
		return errs.Invalid("", "json", "arguments are not valid JSON: "+err.Error())
	}
	return v.validateValue(inst)
}

// ValidateChecked is Validate for a document already known to be one valid
// JSON value or blank (rawjson.Check passed it): it is not scanned for
// validity again, only decoded as far as the schema looks.
func (v *Validator) ValidateChecked(doc []byte) *errs.Error {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	inst, err := decodeFor(v.root, doc)
	if err != nil {
		return errs.Invalid("", "json", "arguments are not valid JSON: "+err.Error())
	}
	return v.validateValue(inst)
}

// validateValue is Validate for an already decoded value (as produced by
// encoding/json, numbers best as json.Number).
func (v *Validator) validateValue(inst any) *errs.Error {
	// A first pass stops at the first violation and builds nothing; only
	// a document that fails is walked again to find the violation to
	// report.
	if v.root.check(inst, nil, false) == nil {
		return nil
	}
	f := v.root.check(inst, nil, true)
	if f == nil {
		// Both passes apply the same rules; should they ever disagree,
		// the refusal still stands, unexplained rather than lost.
		return errs.Invalid("", "schema", "the arguments do not match the tool's input schema")
	}
	return describe(f)
}

// failure is a violation at an instance location, with the violations it
// groups. The reported one is picked from this tree (describe).
type failure struct {
	loc    []string
	kind   violation
	causes []*failure
}

// invalid is what a pass that builds nothing returns for any violation.
var invalid = &failure{}

func fail(collect bool, loc []string, k violation) *failure {
	if !collect {
		return invalid
	}
	return &failure{loc: append([]string(nil), loc...), kind: k}
}

func group(loc []string, k violation, causes []*failure) *failure {
	return &failure{loc: append([]string(nil), loc...), kind: k, causes: causes}
}

// check validates v at loc. With collect false it returns invalid at the
// first violation; with collect true it gathers every violation, in the
// order the keywords are checked: the type-like rules (type, const, enum)
// alone, then $ref, the value's own rules, not, allOf, anyOf, oneOf.
func (n *node) check(v any, loc []string, collect bool) *failure {
	if n.always != nil {
		if *n.always {
			return nil
		}
		return fail(collect, loc, falseSchema{})
	}
	t := typeOf(v)
	if t == invalidType {
		return fail(collect, loc, invalidValue{v})
	}
	if n.types != 0 && n.types&t == 0 && (n.types&integerType == 0 || t != numberType || !isInteger(v)) {
		return fail(collect, loc, typeMismatch{got: t.String(), want: n.types.names()})
	}
	if n.hasConst && !equal(v, n.constVal) {
		return fail(collect, loc, constFailed{got: v, want: n.constVal})
	}
	if n.hasEnum && !n.inEnum(v) {
		return fail(collect, loc, enumFailed{got: v, want: n.enum})
	}
	var found []*failure
	if n.ref != nil {
		if f := n.ref.check(v, loc, collect); f != nil {
			if !collect {
				return f
			}
			causes := []*failure{f}
			if _, ok := f.kind.(groupKind); ok {
				causes = f.causes
			}
			found = append(found, group(loc, refKind{}, causes))
		}
	}
	switch v := v.(type) {
	case map[string]any:
		found = n.checkObject(v, loc, collect, found)
	case []any:
		found = n.checkArray(v, loc, collect, found)
	case string:
		found = n.checkString(v, loc, collect, found)
	case bool, nil, skipped:
	default:
		found = n.checkNumber(v, loc, collect, found)
	}
	if !collect && len(found) > 0 {
		return invalid
	}
	found = n.checkApplicators(v, loc, collect, found)
	switch len(found) {
	case 0:
		return nil
	case 1:
		return found[0]
	}
	if !collect {
		return invalid
	}
	return group(loc, groupKind{}, found)
}

func (n *node) inEnum(v any) bool {
	for _, item := range n.enum {
		if equal(v, item) {
			return true
		}
	}
	return false
}

func (n *node) checkObject(obj map[string]any, loc []string, collect bool, found []*failure) []*failure {
	if n.minProps >= 0 && len(obj) < n.minProps {
		found = append(found, fail(collect, loc, countFailed{"minProperties", len(obj), n.minProps}))
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		found = append(found, fail(collect, loc, countFailed{"maxProperties", len(obj), n.maxProps}))
	}
	if len(n.required) > 0 {
		var missing []string
		for _, name := range n.required {
			if _, ok := obj[name]; !ok {
				missing = append(missing, name)
			}
		}
		if missing != nil {
			found = append(found, fail(collect, loc, requiredFailed{missing}))
		}
	}
	if !collect && len(found) > 0 {
		return found
	}
	if n.props == nil && n.patternProps == nil && !n.addlSet {
		return found
	}
	var unknown []string
	check := func(name string, val any) {
		evaluated := false
		if sub, ok := n.props[name]; ok {
			evaluated = true
			if f := sub.check(val, append(loc, name), collect); f != nil {
				found = append(found, f)
			}
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(name) {
				evaluated = true
				if f := pp.n.check(val, append(loc, name), collect); f != nil {
					found = append(found, f)
				}
			}
		}
		if !evaluated && n.addlSet {
			switch {
			case n.addl != nil:
				if f := n.addl.check(val, append(loc, name), collect); f != nil {
					found = append(found, f)
				}
			case !n.addlAllow:
				unknown = append(unknown, name)
			}
		}
	}
	if !collect {
		for name, val := range obj {
			if check(name, val); len(found) > 0 || len(unknown) > 0 {
				return append(found, invalid)
			}
		}
		return found
	}
	// Members in name order, so the violation reported is the same on
	// every run.
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		check(name, obj[name])
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(n.props))
		for name := range n.props {
			known = append(known, name)
		}
		found = append(found, fail(collect, loc, additionalFailed{unknown, known}))
	}
	return found
}

func (n *node) checkArray(arr []any, loc []string, collect bool, found []*failure) []*failure {
	if n.minItems >= 0 && len(arr) < n.minItems {
		found = append(found, fail(collect, loc, countFailed{"minItems", len(arr), n.minItems}))
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		found = append(found, fail(collect, loc, countFailed{"maxItems", len(arr), n.maxItems}))
	}
	if n.uniqueItems && len(arr) > 1 {
		if j, i := duplicates(arr); i >= 0 {
			found = append(found, fail(collect, loc, uniqueFailed{j, i}))
		}
	}
	for i, item := range arr {
		if !collect && len(found) > 0 {
			return found
		}
		sub := n.items
		if i < len(n.prefixItems) {
			sub = n.prefixItems[i]
		}
		if sub == nil {
			continue
		}
		if f := sub.check(item, append(loc, strconv.Itoa(i)), collect); f != nil {
			found = append(found, f)
		}
	}
	return found
}

func (n *node) checkString(s string, loc []string, collect bool, found []*failure) []*failure {
	if n.minLength >= 0 || n.maxLength >= 0 {
		length := utf8.RuneCountInString(s)
		if n.minLength >= 0 && length < n.minLength {
			found = append(found, fail(collect, loc, countFailed{"minLength", length, n.minLength}))
		}
		if n.maxLength >= 0 && length > n.maxLength {
			found = append(found, fail(collect, loc, countFailed{"maxLength", length, n.maxLength}))
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		found = append(found, fail(collect, loc, patternFailed{got: s, want: n.pattern.String()}))
	}
	return found
}

func (n *node) checkNumber(v any, loc []string, collect bool, found []*failure) []*failure {
	if n.minimum == nil && n.maximum == nil && n.exclusiveMinimum == nil && n.exclusiveMaximum == nil && n.multipleOf == nil {
		return found
	}
	num, ok := ratOf(v)
	if !ok {
		return found
	}
	if n.minimum != nil && num.Cmp(n.minimum) < 0 {
		found = append(found, fail(collect, loc, boundFailed{"minimum", num, n.minimum}))
	}
	if n.maximum != nil && num.Cmp(n.maximum) > 0 {
		found = append(found, fail(collect, loc, boundFailed{"maximum", num, n.maximum}))
	}
	if n.exclusiveMinimum != nil && num.Cmp(n.exclusiveMinimum) <= 0 {
		found = append(found, fail(collect, loc, boundFailed{"exclusiveMinimum", num, n.exclusiveMinimum}))
	}
	if n.exclusiveMaximum != nil && num.Cmp(n.exclusiveMaximum) >= 0 {
		found = append(found, fail(collect, loc, boundFailed{"exclusiveMaximum", num, n.exclusiveMaximum}))
	}
	if n.multipleOf != nil {
		if q := new(big.Rat).Quo(num, n.multipleOf); !q.IsInt() {
			found = append(found, fail(collect, loc, boundFailed{"multipleOf", num, n.multipleOf}))
		}
	}
	return found
}

// checkApplicators applies not, allOf, anyOf and oneOf to the same value.
// Whether a subschema matches is decided by a pass that builds nothing;
// its violations are gathered only when they are reported.
func (n *node) checkApplicators(v any, loc []string, collect bool, found []*failure) []*failure {
	if n.not != nil && n.not.check(v, loc, false) == nil {
		if found = append(found, fail(collect, loc, notFailed{})); !collect {
			return found
		}
	}
	if len(n.allOf) > 0 {
		var causes []*failure
		for _, sub := range n.allOf {
			if f := sub.check(v, loc, collect); f != nil {
				if !collect {
					return append(found, invalid)
				}
				causes = append(causes, f)
			}
		}
		if causes != nil {
			found = append(found, group(loc, allOfKind{}, causes))
		}
	}
	if len(n.anyOf) > 0 && !anyMatches(n.anyOf, v, loc) {
		if !collect {
			return append(found, invalid)
		}
		found = append(found, group(loc, anyOfKind{}, collectAll(n.anyOf, v, loc)))
	}
	if len(n.oneOf) > 0 {
		matched := -1
		for i, sub := range n.oneOf {
			if sub.check(v, loc, false) != nil {
				continue
			}
			if matched >= 0 {
				return append(found, fail(collect, loc, oneOfFailed{matched: []int{matched, i}}))
			}
			matched = i
		}
		if matched < 0 {
			if !collect {
				return append(found, invalid)
			}
			found = append(found, group(loc, oneOfFailed{}, collectAll(n.oneOf, v, loc)))
		}
	}
	return found
}

func anyMatches(schemas []*node, v any, loc []string) bool {
	for _, sub := range schemas {
		if sub.check(v, loc, false) == nil {
			return true
		}
	}
	return false
}

// collectAll gathers the violations of schemas a first pass found v
// breaks, in order.
func collectAll(schemas []*node, v any, loc []string) []*failure {
	causes := make([]*failure, 0, len(schemas))
	for _, sub := range schemas {
		if f := sub.check(v, loc, true); f != nil {
			causes = append(causes, f)
		}
	}
	return causes
}
