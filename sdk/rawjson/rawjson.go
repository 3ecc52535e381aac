// Package rawjson checks raw JSON bytes before they are decoded.
//
// encoding/json replaces invalid UTF-8 and lone UTF-16 surrogate escapes with
// U+FFFD while decoding, so a check on the decoded strings comes too late:
// the bytes the caller sent are already gone, and a hash over the decoded
// text silently covers something else (docs/decisions.md D11). Deeply nested values
// cost memory and time out of proportion to their size. Check refuses both on
// the raw bytes, in one pass without allocating, and names the offending
// value by its JSON path ("content", "tags[2]", "value.a.b").
//
// The package depends only on the standard library and sdk/errs so the
// host, the SDK and any area can run it on every call's arguments.
package rawjson

import (
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultMaxDepth is the nesting limit used when Check is given a limit
// below 1: deep enough for any real tool argument, shallow enough that a
// hostile value cannot amplify.
const DefaultMaxDepth = 64

// Constraints named in details.constraint of Check's errors.
const (
	ConstraintUTF8     = "utf8"      // invalid UTF-8 bytes or a lone surrogate escape in a string
	ConstraintMaxDepth = "max_depth" // arrays and objects nested deeper than the limit
	ConstraintJSON     = "json"      // not JSON at all
)

// Check scans raw and returns nil when it is one JSON value (surrounded by
// optional whitespace) whose strings — keys and values — are valid UTF-8
// both as raw bytes and through their \u escapes (a \uD800–\uDBFF escape must
// be followed by a \uDC00–\uDFFF escape, and a low one may not stand alone),
// and whose arrays and objects nest at most maxDepth deep (the outermost
// container is depth 1; maxDepth < 1 means DefaultMaxDepth). Empty or
// all-whitespace input holds nothing to refuse and passes.
//
// Otherwise it returns a 400 ERR_INVALID_INPUT error whose details.field is
// the JSON path of the first offending value in document order ("" for the
// document itself) and details.constraint is ConstraintUTF8,
// ConstraintMaxDepth or ConstraintJSON.
func Check(raw []byte, maxDepth int) *errs.Error {
	if maxDepth < 1 {
		maxDepth = DefaultMaxDepth
	}
	s := scanner{raw: raw, max: maxDepth}
	if s.skipSpace(); s.i == len(raw) {
		return nil
	}
	return s.run()
}

// frame is one open container on the path to the current value.
type frame struct {
	object bool
	// index is the current element's index (arrays).
	index int
	// keyStart and keyEnd delimit the current member's key (objects): the
	// raw bytes between the quotes, still escaped.
	keyStart, keyEnd int
}

type scanner struct {
	raw []byte
	i   int
	max int
	// The open containers: the first DefaultMaxDepth in a fixed array (so a
	// passing check allocates nothing), any deeper ones in extra.
	depth int
	fixed [DefaultMaxDepth]frame
	extra []frame
}

func (s *scanner) frame(i int) *frame {
	if i < len(s.fixed) {
		return &s.fixed[i]
	}
	return &s.extra[i-len(s.fixed)]
}

func (s *scanner) top() *frame { return s.frame(s.depth - 1) }

func (s *scanner) push(f frame) {
	if s.depth < len(s.fixed) {
		s.fixed[s.depth] = f
	} else {
		s.extra = append(s.extra[:s.depth-len(s.fixed)], f)
	}
	s.depth++
}

func (s *scanner) pop() { s.depth-- }

// fail describes a failure at the current path. The path is built only here,
// so a document that passes costs no allocation.
type fail struct {
	constraint string
	what       string
	// inKey: the failure is inside an object key, so the path ends at the
	// object (the member has no name yet).
	inKey bool
}

func (s *scanner) run() *errs.Error {
	if f := s.parse(); f != nil {
		field := s.path(f.inKey)
		e := errs.Invalid(field, f.constraint, message(field, f))
		if f.constraint == ConstraintMaxDepth {
			e.Details["limit"] = s.max
		}
		return e
	}
	return nil
}

func message(field string, f *fail) string {
	where := field
	if where == "" {
		where = "the arguments"
	}
	switch f.constraint {
	case ConstraintUTF8:
		if f.inKey {
			return "a property name in " + where + " " + f.what + "; send text as UTF-8"
		}
		return where + " " + f.what + "; send text as UTF-8"
	case ConstraintMaxDepth:
		return where + " " + f.what + "; flatten the value"
	}
	return "the arguments are not valid JSON: " + f.what + " (in " + where + ")"
}

// parse walks the document with an explicit stack, so nesting costs no Go
// stack and the limit is enforced before a frame is pushed.
func (s *scanner) parse() *fail {
	for {
		// A value is expected here.
		s.skipSpace()
		if s.i >= len(s.raw) {
			return syntax("unexpected end of input")
		}
		switch c := s.raw[s.i]; c {
		case '{', '[':
			if s.depth >= s.max {
				return &fail{constraint: ConstraintMaxDepth, what: "nests arrays and objects deeper than " + itoa(s.max) + " levels"}
			}
			s.i++
			s.push(frame{object: c == '{'})
			s.skipSpace()
			if s.i < len(s.raw) && (s.raw[s.i] == '}' && c == '{' || s.raw[s.i] == ']' && c == '[') {
				s.i++
				s.pop()
				break
			}
			if c == '{' {
				if f := s.member(); f != nil {
					return f
				}
			}
			continue
		case '"':
			if f := s.str(); f != nil {
				return f
			}
		case 't':
			if f := s.literal("true"); f != nil {
				return f
			}
		case 'f':
			if f := s.literal("false"); f != nil {
				return f
			}
		case 'n':
			if f := s.literal("null"); f != nil {
				return f
			}
		default:
			if c == '-' || c >= '0' && c <= '9' {
				if f := s.number(); f != nil {
					return f
				}
				break
			}
			return syntax("unexpected character " + quoteByte(c))
		}
		// A value ended: close containers until one expects another value.
		for {
			s.skipSpace()
			if s.depth == 0 {
				if s.i != len(s.raw) {
					return syntax("unexpected data after the value")
				}
				return nil
			}
			if s.i >= len(s.raw) {
				return syntax("unexpected end of input")
			}
			top := s.top()
			c := s.raw[s.i]
			if c == ',' {
				s.i++
				if top.object {
					if f := s.member(); f != nil {
						return f
					}
				} else {
					top.index++
				}
				break
			}
			if top.object && c == '}' || !top.object && c == ']' {
				s.i++
				s.pop()
				continue
			}
			return syntax("expected ',' or a closing bracket, found " + quoteByte(c))
		}
	}
}

// member reads `"key" :` of an object member, leaving the value to parse.
func (s *scanner) member() *fail {
	s.skipSpace()
	if s.i >= len(s.raw) || s.raw[s.i] != '"' {
		return &fail{constraint: ConstraintJSON, what: "expected a property name", inKey: true}
	}
	top := s.top()
	start := s.i + 1
	if f := s.str(); f != nil {
		f.inKey = true
		return f
	}
	top.keyStart, top.keyEnd = start, s.i-1
	s.skipSpace()
	if s.i >= len(s.raw) || s.raw[s.i] != ':' {
		return &fail{constraint: ConstraintJSON, what: "expected ':' after a property name", inKey: true}
	}
	s.i++
	return nil
}

func (s *scanner) skipSpace() {
	for s.i < len(s.raw) {
		switch s.raw[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) literal(word string) *fail {
	if len(s.raw)-s.i < len(word) || string(s.raw[s.i:s.i+len(word)]) != word {
		return syntax("invalid literal")
	}
	s.i += len(word)
	return nil
}

// number accepts JSON's number grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (s *scanner) number() *fail {
	if s.raw[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.raw) && s.raw[s.i] == '0':
		s.i++
	case s.i < len(s.raw) && s.raw[s.i] >= '1' && s.raw[s.i] <= '9':
		s.digits()
	default:
		return syntax("invalid number")
	}
	if s.i < len(s.raw) && s.raw[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return syntax("invalid number")
		}
	}
	if s.i < len(s.raw) && (s.raw[s.i] == 'e' || s.raw[s.i] == 'E') {
		s.i++
		if s.i < len(s.raw) && (s.raw[s.i] == '+' || s.raw[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return syntax("invalid number")
		}
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.raw) && s.raw[s.i] >= '0' && s.raw[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str scans a string starting at its opening quote and leaves s.i after the
// closing one. ASCII takes the fast path; other bytes must decode as UTF-8,
// and \u escapes must not leave a surrogate unpaired.
func (s *scanner) str() *fail {
	s.i++ // opening quote
	for s.i < len(s.raw) {
		c := s.raw[s.i]
		switch {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			if f := s.escape(); f != nil {
				return f
			}
		case c < 0x20:
			return syntax("control character in a string; escape it")
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, size := utf8.DecodeRune(s.raw[s.i:])
			if r == utf8.RuneError && size <= 1 {
				return &fail{constraint: ConstraintUTF8, what: "is not valid UTF-8 (byte 0x" + hexByte(c) + " at offset " + itoa(s.i) + ")"}
			}
			s.i += size
		}
	}
	return syntax("unterminated string")
}

// escape reads one escape sequence starting at its backslash; a high
// surrogate escape consumes its low partner too.
func (s *scanner) escape() *fail {
	if s.i+1 >= len(s.raw) {
		return syntax("unterminated string")
	}
	switch s.raw[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
	default:
		return syntax("invalid escape " + quoteByte(s.raw[s.i+1]))
	}
	at := s.i
	u, ok := s.hex4(s.i + 2)
	if !ok {
		return syntax("invalid \\u escape")
	}
	s.i += 6
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return loneSurrogate(u, at)
	case u >= 0xD800 && u <= 0xDBFF:
		if s.i+1 < len(s.raw) && s.raw[s.i] == '\\' && s.raw[s.i+1] == 'u' {
			lo, ok := s.hex4(s.i + 2)
			if !ok {
				return syntax("invalid \\u escape")
			}
			if lo >= 0xDC00 && lo <= 0xDFFF {
				s.i += 6
				return nil
			}
		}
		return loneSurrogate(u, at)
	}
	return nil
}

func loneSurrogate(u rune, at int) *fail {
	return &fail{constraint: ConstraintUTF8, what: "holds the lone UTF-16 surrogate \\u" + hex4String(u) + " at offset " + itoa(at) + ", which is not a character"}
}

// hex4 decodes the four hex digits at raw[at:at+4].
func (s *scanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.raw) {
		return 0, false
	}
	var r rune
	for _, c := range s.raw[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func syntax(what string) *fail { return &fail{constraint: ConstraintJSON, what: what} }
