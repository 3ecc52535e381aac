package trail

import (
	"slices"
	"unicode/utf8"
)

// appendFast writes the values a task change is made of (nil, booleans,
// strings, Go numbers, []string, []any and map[string]any) straight into
// dst, exactly as appendValue does, without the buffer per member and the
// path string per member appendValue keeps for its error messages: every
// write appends one to its task's chain. false means v holds something it
// does not take (another type, an array-index key, which JavaScript orders
// differently, or invalid UTF-8): the caller starts again on appendValue,
// which also names the offending path.
func appendFast(dst []byte, v any, depth int) ([]byte, bool) {
	if depth > maxDepth {
		return dst, false
	}
	if out, ok := appendGoNumber(dst, v); ok {
		return out, true
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if x {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		if !utf8.ValidString(x) {
			return dst, false
		}
		return AppendString(dst, x), true
	case []string:
		if x == nil {
			// encoding/json's nil slice, as appendValue writes it.
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if !utf8.ValidString(s) {
				return dst, false
			}
			dst = AppendString(dst, s)
		}
		return append(dst, ']'), true
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendFast(dst, e, depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if _, index := isArrayIndex(k); index || !utf8.ValidString(k) {
				return dst, false
			}
			keys = append(keys, k)
		}
		slices.Sort(keys) // bytewise, as appendValue orders a map's keys
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendFast(dst, x[k], depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}
