package engine

import (
	"errors"
	"fmt"
)

// Limits on a JSON value stored in the state (sdd_state set). Both are
// checked on the compact encoding, which is exactly what the state file
// holds: the file is written compactly, so a stored value costs what it
// measures here and nesting cannot be amplified by indentation.
const (
	// MaxValueDepth is the deepest nesting of arrays and objects a stored
	// value may have ([] and {} are depth 1, a scalar depth 0).
	MaxValueDepth = 64
	// MaxValueBytes is the largest compact encoding of a stored value.
	MaxValueBytes = 256 << 10
	// MaxStateBytes bounds the whole state document as written, so many
	// values of the maximum size cannot grow the file without end.
	MaxStateBytes = 16 << 20
)

// stateLimit is MaxStateBytes; tests lower it to reach it quickly.
var stateLimit = MaxStateBytes

// errTooDeep is returned by jsonDepth once the limit is passed.
var errTooDeep = errors.New("nesting too deep")

// jsonDepth returns the maximum nesting depth of the JSON text data,
// scanning bytes without decoding, and errTooDeep as soon as it passes
// limit (so a hostile value costs one pass, never a deep recursion). The
// scan only tracks brackets outside strings: it does not validate the
// JSON, which the decoder does.
func jsonDepth(data []byte, limit int) (int, error) {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
			}
			if deepest > limit {
				return deepest, fmt.Errorf("%w: more than %d levels", errTooDeep, limit)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest, nil
}
