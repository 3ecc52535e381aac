package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Validator checks JSON documents against one compiled schema.
type Validator struct {
	root *node
}

// node is one compiled (sub)schema. Absent keywords are zero values: nil
// pointers and slices, -1 counts.
type node struct {
	// always is set for the boolean schemas true and false.
	always *bool

	types    jsonType
	hasConst bool
	constVal any
	enum     []any // nil when absent; an empty enum admits nothing
	hasEnum  bool

	ref    *node
	refRaw string // the $ref as written, resolved after the tree is built

	minProps, maxProps int
	required           []string
	props              map[string]*node
	patternProps       []patternProp
	// additionalProperties: a boolean (addlSet, addlAllow) or a schema.
	addlSet   bool
	addlAllow bool
	addl      *node

	minItems, maxItems int
	uniqueItems        bool
	prefixItems        []*node
	items              *node

	minLength, maxLength int
	pattern              *regexp.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf *big.Rat

	not                 *node
	allOf, anyOf, oneOf []*node

	// ptr is where the node sits in its document (a JSON pointer), for
	// compile errors.
	ptr string

	// shallow and plain guide decodeFor (markShallow).
	shallow, plain bool
}

type patternProp struct {
	re *regexp.Regexp
	n  *node
}

// schemaError says why a schema does not compile: where (a JSON pointer
// into the schema) and what rule of the schema language it breaks.
type schemaError struct {
	Pointer string
	Message string
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("at #%s: %s", e.Pointer, e.Message)
}

// Compile compiles a JSON Schema (draft 2020-12). Every keyword the
// validator does not implement is refused here, naming the keyword and
// where it is, rather than ignored: a schema means what it says or does
// not register. Annotations (title, description, default, examples,
// format, ...) are accepted and do not constrain; format is an annotation
// in draft 2020-12.
func Compile(raw json.RawMessage) (*Validator, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := &compiler{nodes: map[string]*node{}}
	root, err := c.compile(doc, "", true)
	if err == nil {
		err = c.resolve()
	}
	if err == nil {
		err = c.checkCycles()
	}
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	markShallow(c.nodes)
	return &Validator{root: root}, nil
}

// MustCompile is Compile that panics, for schemas fixed at build time.
func MustCompile(raw json.RawMessage) *Validator {
	v, err := Compile(raw)
	if err != nil {
		panic(err)
	}
	return v
}

// Supported lists the keywords Compile accepts: those it validates, then
// the annotations it accepts and ignores.
func Supported() (validating, annotations []string) {
	for k, kind := range keywords {
		if kind == validation {
			validating = append(validating, k)
		} else {
			annotations = append(annotations, k)
		}
	}
	sort.Strings(validating)
	sort.Strings(annotations)
	return validating, annotations
}

type keywordKind uint8

const (
	validation keywordKind = iota + 1
	annotation
	rootOnly // an annotation allowed at the document's root only
)

var keywords = map[string]keywordKind{
	"type": validation, "enum": validation, "const": validation,
	"properties": validation, "required": validation, "additionalProperties": validation,
	"patternProperties": validation, "minProperties": validation, "maxProperties": validation,
	"items": validation, "prefixItems": validation, "minItems": validation, "maxItems": validation,
	"uniqueItems": validation, "minLength": validation, "maxLength": validation, "pattern": validation,
	"minimum": validation, "maximum": validation, "exclusiveMinimum": validation,
	"exclusiveMaximum": validation, "multipleOf": validation,
	"allOf": validation, "anyOf": validation, "oneOf": validation, "not": validation,
	"$ref": validation, "$defs": validation, "definitions": validation,
	"title": annotation, "description": annotation, "default": annotation, "examples": annotation,
	"deprecated": annotation, "readOnly": annotation, "writeOnly": annotation, "$comment": annotation,
	"format": annotation, "contentEncoding": annotation, "contentMediaType": annotation,
	"$schema": rootOnly, "$id": rootOnly,
}

// draft202012 are the $schema values naming the draft Compile implements.
var draft202012 = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"http://json-schema.org/draft/2020-12/schema":   true,
	"http://json-schema.org/draft/2020-12/schema#":  true,
}

type compiler struct {
	// nodes are the compiled schemas by JSON pointer, the targets of $ref.
	nodes map[string]*node
	refs  []*node
}

func (c *compiler) fail(ptr, format string, args ...any) error {
	return &schemaError{Pointer: ptr, Message: fmt.Sprintf(format, args...)}
}

func (c *compiler) compile(v any, ptr string, root bool) (*node, error) {
	n := &node{ptr: ptr, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
	c.nodes[ptr] = n
	if b, ok := v.(bool); ok {
		n.always = &b
		return n, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, c.fail(ptr, "a schema must be an object or a boolean (got %s)", typeOf(v))
	}
	// Keywords in sorted order, so the error reported first is always the
	// same one.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := c.keyword(n, k, obj[k], ptr, root); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// keyword compiles one keyword of the schema object at ptr into n.
func (c *compiler) keyword(n *node, k string, v any, ptr string, root bool) error {
	at := ptr + "/" + escapePointer(k)
	kind := keywords[k]
	switch {
	case kind == 0:
		valid, _ := Supported()
		return c.fail(ptr, "keyword %q is not supported by cairn's schema validator (it validates draft 2020-12 with %s; annotations such as title, description, default and format are accepted)", k, strings.Join(valid, ", "))
	case kind == rootOnly && !root:
		return c.fail(at, "%s is accepted only at the schema's root", k)
	}
	var err error
	switch k {
	case "type":
		n.types, err = c.typeSet(v, at)
	case "enum":
		arr, ok := v.([]any)
		if !ok {
			return c.fail(at, "enum must be an array (got %s)", typeOf(v))
		}
		n.enum, n.hasEnum = arr, true
	case "const":
		n.constVal, n.hasConst = v, true
	case "properties":
		n.props, err = c.schemaMap(v, at)
	case "patternProperties":
		var m map[string]*node
		if m, err = c.schemaMap(v, at); err == nil {
			for src, sub := range m {
				re, rerr := regexp.Compile(src)
				if rerr != nil {
					return c.fail(at, "property pattern %q is not a valid regular expression (Go RE2 syntax): %v", src, rerr)
				}
				n.patternProps = append(n.patternProps, patternProp{re: re, n: sub})
			}
			sort.Slice(n.patternProps, func(i, j int) bool { return n.patternProps[i].re.String() < n.patternProps[j].re.String() })
		}
	case "additionalProperties":
		n.addlSet = true
		if b, ok := v.(bool); ok {
			n.addlAllow = b
			return nil
		}
		n.addl, err = c.compile(v, at, false)
	case "required":
		n.required, err = c.stringSet(v, at)
	case "minProperties":
		n.minProps, err = c.count(v, at, k)
	case "maxProperties":
		n.maxProps, err = c.count(v, at, k)
	case "items":
		n.items, err = c.compile(v, at, false)
	case "prefixItems":
		n.prefixItems, err = c.schemaList(v, at, k)
	case "minItems":
		n.minItems, err = c.count(v, at, k)
	case "maxItems":
		n.maxItems, err = c.count(v, at, k)
	case "uniqueItems":
		b, ok := v.(bool)
		if !ok {
			return c.fail(at, "uniqueItems must be a boolean (got %s)", typeOf(v))
		}
		n.uniqueItems = b
	case "minLength":
		n.minLength, err = c.count(v, at, k)
	case "maxLength":
		n.maxLength, err = c.count(v, at, k)
	case "pattern":
		// Patterns are Go RE2, as they were with the previous validator:
		// what RE2 lacks of ECMA-262 (look-around, back-references) does
		// not compile and refuses the schema; where both compile, \s and
		// "." differ on non-ASCII spaces and line separators, and matching
		// is by code point, not UTF-16 unit.
		s, ok := v.(string)
		if !ok {
			return c.fail(at, "pattern must be a string (got %s)", typeOf(v))
		}
		if n.pattern, err = regexp.Compile(s); err != nil {
			return c.fail(at, "pattern %q is not a valid regular expression (Go RE2 syntax): %v", s, err)
		}
	case "minimum":
		n.minimum, err = c.number(v, at, k)
	case "maximum":
		n.maximum, err = c.number(v, at, k)
	case "exclusiveMinimum":
		n.exclusiveMinimum, err = c.number(v, at, k)
	case "exclusiveMaximum":
		n.exclusiveMaximum, err = c.number(v, at, k)
	case "multipleOf":
		if n.multipleOf, err = c.number(v, at, k); err == nil && n.multipleOf.Sign() <= 0 {
			return c.fail(at, "multipleOf must be greater than 0")
		}
	case "allOf":
		n.allOf, err = c.schemaList(v, at, k)
	case "anyOf":
		n.anyOf, err = c.schemaList(v, at, k)
	case "oneOf":
		n.oneOf, err = c.schemaList(v, at, k)
	case "not":
		n.not, err = c.compile(v, at, false)
	case "$ref":
		s, ok := v.(string)
		if !ok {
			return c.fail(at, "$ref must be a string (got %s)", typeOf(v))
		}
		n.refRaw = s
		c.refs = append(c.refs, n)
	case "$defs", "definitions":
		_, err = c.schemaMap(v, at)
	case "$schema":
		s, ok := v.(string)
		if !ok || !draft202012[s] {
			return c.fail(at, "$schema %v is not supported: cairn validates JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12/schema)", v)
		}
	default:
		return c.annotation(k, v, at)
	}
	return err
}

// annotation checks an annotation's form; it never constrains a value.
func (c *compiler) annotation(k string, v any, at string) error {
	var want jsonType
	switch k {
	case "title", "description", "$comment", "format", "contentEncoding", "contentMediaType", "$id":
		want = stringType
	case "deprecated", "readOnly", "writeOnly":
		want = booleanType
	case "examples":
		want = arrayType
	default: // default: any value
		return nil
	}
	if typeOf(v) != want {
		return c.fail(at, "%s must be a %s (got %s)", k, want, typeOf(v))
	}
	return nil
}

func (c *compiler) typeSet(v any, at string) (jsonType, error) {
	var names []any
	switch v := v.(type) {
	case string:
		names = []any{v}
	case []any:
		if len(v) == 0 {
			return 0, c.fail(at, "type must name at least one type")
		}
		names = v
	default:
		return 0, c.fail(at, "type must be a type name or an array of them (got %s)", typeOf(v))
	}
	var set jsonType
	for _, nm := range names {
		s, _ := nm.(string)
		t := typeNamed(s)
		if t == invalidType {
			return 0, c.fail(at, "type %v is not one of null, boolean, number, integer, string, array, object", nm)
		}
		if set&t != 0 {
			return 0, c.fail(at, "type names %s twice", s)
		}
		set |= t
	}
	return set, nil
}

func (c *compiler) schemaMap(v any, at string) (map[string]*node, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, c.fail(at, "must be an object of schemas (got %s)", typeOf(v))
	}
	m := make(map[string]*node, len(obj))
	for name, sub := range obj {
		n, err := c.compile(sub, at+"/"+escapePointer(name), false)
		if err != nil {
			return nil, err
		}
		m[name] = n
	}
	return m, nil
}

func (c *compiler) schemaList(v any, at, k string) ([]*node, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, c.fail(at, "%s must be a non-empty array of schemas", k)
	}
	out := make([]*node, len(arr))
	for i, sub := range arr {
		n, err := c.compile(sub, at+"/"+strconv.Itoa(i), false)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (c *compiler) stringSet(v any, at string) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, c.fail(at, "required must be an array of property names (got %s)", typeOf(v))
	}
	out := make([]string, 0, len(arr))
	seen := make(map[string]bool, len(arr))
	for _, item := range arr {
		s, ok := item.(string)
		if !ok {
			return nil, c.fail(at, "required must hold strings only (got %s)", typeOf(item))
		}
		if seen[s] {
			return nil, c.fail(at, "required names %q twice", s)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

func (c *compiler) count(v any, at, k string) (int, error) {
	r, ok := ratOf(v)
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > int64(^uint32(0)>>1) {
		return 0, c.fail(at, "%s must be a non-negative integer (got %v)", k, v)
	}
	return int(r.Num().Int64()), nil
}

func (c *compiler) number(v any, at, k string) (*big.Rat, error) {
	r, ok := ratOf(v)
	if !ok {
		return nil, c.fail(at, "%s must be a number (got %s)", k, typeOf(v))
	}
	return r, nil
}

// resolve points every $ref at its target. Only references inside the
// schema's own document are supported: "#" or a JSON pointer such as
// "#/$defs/address".
func (c *compiler) resolve() error {
	for _, n := range c.refs {
		frag, ok := strings.CutPrefix(n.refRaw, "#")
		if !ok {
			return c.fail(n.ptr+"/$ref", "$ref %q is not supported: only references within the schema (\"#\" or \"#/$defs/name\") are", n.refRaw)
		}
		ptr, err := url.PathUnescape(frag)
		if err != nil || (ptr != "" && !strings.HasPrefix(ptr, "/")) {
			return c.fail(n.ptr+"/$ref", "$ref %q is not a JSON pointer into the schema", n.refRaw)
		}
		target, ok := c.nodes[ptr]
		if !ok {
			return c.fail(n.ptr+"/$ref", "$ref %q points at no schema in this document", n.refRaw)
		}
		n.ref = target
	}
	return nil
}

// checkCycles refuses a schema that reaches itself without descending into
// the value ({"$ref":"#"} at the root, or a $defs entry whose allOf refers
// back to it): validating it would never end.
func (c *compiler) checkCycles() error {
	const (
		unvisited = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n] {
		case active:
			return c.fail(n.ptr, "the schema refers to itself ($ref, allOf, anyOf, oneOf or not) without descending into the value")
		case done:
			return nil
		}
		state[n] = active
		next := append(append(append([]*node{n.ref, n.not}, n.allOf...), n.anyOf...), n.oneOf...)
		for _, m := range next {
			if m != nil {
				if err := visit(m); err != nil {
					return err
				}
			}
		}
		state[n] = done
		return nil
	}
	ptrs := make([]string, 0, len(c.nodes))
	for p := range c.nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if err := visit(c.nodes[p]); err != nil {
			return err
		}
	}
	return nil
}

// escapePointer escapes one JSON pointer token.
func escapePointer(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
