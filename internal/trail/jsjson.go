package trail

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// This file is a JSON writer that produces exactly the bytes of JavaScript's
// JSON.stringify. Hashes are computed over these bytes, and a verifier written
// in JavaScript must reach the same digest, so encoding/json (which escapes
// <, >, &, U+2028 and U+2029 and formats numbers differently) cannot be used.

// Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object whose members keep the order they were given in,
// because Go maps have no order and JavaScript objects do.
//
// Stringify writes it as JavaScript would write an object built by assigning
// the members in order: keys that are array indices ("0", "1", ... up to
// 4294967294, canonical form) come first in ascending numeric order, then the
// other keys in insertion order; a repeated key keeps its first position and
// takes its last value.
type Object []Member

// Stringify returns the JSON text JavaScript's JSON.stringify produces for the
// JavaScript value that corresponds to v, with no whitespace.
//
// Accepted values: nil; bool; string; every Go integer and float type (written
// as a JavaScript Number: integers beyond 2^53 lose precision exactly as they
// would in JavaScript, NaN and ±Inf become null, -0 becomes 0); json.Number;
// json.RawMessage (re-encoded, keeping the key order of the text); Object;
// []any; map[string]any; and any other value encoding/json can marshal
// (structs in field order, honouring json tags).
//
// Key order: Object and json.RawMessage keep their order; Go maps, whose order
// is undefined, are written with keys sorted bytewise. In every case the
// JavaScript rule above applies on top (array-index keys first), so the output
// equals JSON.stringify(JSON.parse(output)).
//
// Strings (values and keys) that are not valid UTF-8 are refused with a 400
// ERR_INVALID_INPUT *errs.Error naming the offending path.
func Stringify(v any) (string, error) {
	if b, ok := appendFast(make([]byte, 0, 512), v, 0); ok {
		return string(b), nil
	}
	b, err := appendValue(nil, v, "$", 0)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// maxDepth bounds nesting so that a cyclic or hostile value cannot exhaust the
// stack.
const maxDepth = 1000

func appendValue(dst []byte, v any, path string, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errs.Invalidf(path, "maxDepth", "value nests deeper than %d levels; flatten it", maxDepth)
	}
	if out, ok := appendGoNumber(dst, v); ok {
		return out, nil
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		if !utf8.ValidString(x) {
			return nil, notUTF8(path)
		}
		return AppendString(dst, x), nil
	case json.Number:
		return appendNumberLiteral(dst, string(x), path)
	case json.RawMessage:
		return reencode(dst, x, path)
	case Object:
		return appendObject(dst, x, path, depth)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		obj := make(Object, len(keys))
		for i, k := range keys {
			obj[i] = Member{Key: k, Value: x[k]}
		}
		return appendObject(dst, obj, path, depth)
	}
	// Anything else goes through encoding/json, which silently turns invalid
	// UTF-8 into U+FFFD; check first so that such input is refused instead.
	if err := checkUTF8(reflect.ValueOf(v), path, 0); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Invalidf(path, "type", "value cannot be encoded as JSON: %v", err)
	}
	return reencode(dst, raw, path)
}

// AppendString appends s as a JSON string literal exactly as JSON.stringify
// writes it. s must be valid UTF-8 (callers check); bytes of multi-byte
// sequences are copied unchanged.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendGoNumber writes v as a JavaScript Number when it is one of Go's
// number types (integers beyond 2^53 lose precision as they would in
// JavaScript); false when it is not a number.
func appendGoNumber(dst []byte, v any) ([]byte, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	default:
		return dst, false
	}
	return AppendNumber(dst, f), true
}

// AppendNumber appends f as JavaScript's Number::toString writes it (which
// JSON.stringify uses), with NaN and infinities written as null.
func AppendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 { // also -0, which JavaScript prints as 0
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Both Go and ECMAScript pick the shortest digit string that round-trips
	// (closest to the value on ties); only the layout differs.
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	e := bytes.IndexByte(b, 'e')
	exp, _ := strconv.Atoi(string(b[e+1:]))
	var digits []byte
	digits = append(digits, b[0])
	if e > 1 {
		digits = append(digits, b[2:e]...)
	}
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for i := 0; i < n-k; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendNumberLiteral writes a JSON number literal as JavaScript would after
// parsing it into a double.
func appendNumberLiteral(dst []byte, lit, path string) ([]byte, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			// JavaScript parses an out-of-range literal to ±Infinity or 0.
			return AppendNumber(dst, f), nil
		}
		return nil, errs.Invalidf(path, "type", "%q is not a JSON number", lit)
	}
	return AppendNumber(dst, f), nil
}

// isArrayIndex reports whether JavaScript treats key as an array index, which
// puts it ahead of all other keys in property order.
func isArrayIndex(key string) (uint32, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxUint32-1 {
		return 0, false
	}
	return uint32(n), true
}

// encodedMember is a member whose value is already encoded.
type encodedMember struct {
	key   string
	value []byte
}

// writeMembers orders members as JavaScript property order does and writes
// them as an object.
func writeMembers(dst []byte, ms []encodedMember) []byte {
	// Later duplicates replace the value but keep the first position.
	seen := make(map[string]int, len(ms))
	uniq := ms[:0:0]
	for _, m := range ms {
		if i, ok := seen[m.key]; ok {
			uniq[i].value = m.value
			continue
		}
		seen[m.key] = len(uniq)
		uniq = append(uniq, m)
	}
	type indexed struct {
		n uint32
		m encodedMember
	}
	var idx []indexed
	var rest []encodedMember
	for _, m := range uniq {
		if n, ok := isArrayIndex(m.key); ok {
			idx = append(idx, indexed{n, m})
		} else {
			rest = append(rest, m)
		}
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i].n < idx[j].n })
	dst = append(dst, '{')
	first := true
	write := func(m encodedMember) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	for _, m := range idx {
		write(m.m)
	}
	for _, m := range rest {
		write(m)
	}
	return append(dst, '}')
}

func appendObject(dst []byte, obj Object, path string, depth int) ([]byte, error) {
	ms := make([]encodedMember, 0, len(obj))
	for _, m := range obj {
		if !utf8.ValidString(m.Key) {
			return nil, notUTF8(path + " (a key)")
		}
		v, err := appendValue(nil, m.Value, path+"."+m.Key, depth+1)
		if err != nil {
			return nil, err
		}
		ms = append(ms, encodedMember{m.Key, v})
	}
	return writeMembers(dst, ms), nil
}

// reencode rewrites JSON text as JSON.stringify(JSON.parse(text)) would.
func reencode(dst []byte, raw []byte, path string) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, notUTF8(path)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out, err := decodeValue(dst, dec, path, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errs.Invalid(path, "format", "JSON text has trailing data")
	}
	return out, nil
}

func decodeValue(dst []byte, dec *json.Decoder, path string, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errs.Invalidf(path, "maxDepth", "value nests deeper than %d levels; flatten it", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, errs.Invalidf(path, "format", "malformed JSON: %v", err)
	}
	switch t := tok.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return appendValue(dst, t, path, depth)
	case string:
		return AppendString(dst, t), nil
	case json.Number:
		return appendNumberLiteral(dst, string(t), path)
	case json.Delim:
		switch t {
		case '[':
			dst = append(dst, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = decodeValue(dst, dec, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, errs.Invalidf(path, "format", "malformed JSON: %v", err)
			}
			return append(dst, ']'), nil
		case '{':
			var ms []encodedMember
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, errs.Invalidf(path, "format", "malformed JSON: %v", err)
				}
				key, _ := kt.(string)
				v, err := decodeValue(nil, dec, path+"."+key, depth+1)
				if err != nil {
					return nil, err
				}
				ms = append(ms, encodedMember{key, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, errs.Invalidf(path, "format", "malformed JSON: %v", err)
			}
			return writeMembers(dst, ms), nil
		}
	}
	return nil, errs.Invalidf(path, "format", "malformed JSON near %v", tok)
}

// checkUTF8 walks the parts of v that encoding/json would encode and refuses
// any string that is not valid UTF-8.
func checkUTF8(v reflect.Value, path string, depth int) error {
	if depth > maxDepth {
		return errs.Invalidf(path, "maxDepth", "value nests deeper than %d levels (or is cyclic); flatten it", maxDepth)
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return notUTF8(path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkUTF8(v.Elem(), path, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // []byte is base64-encoded
		}
		for i := 0; i < v.Len(); i++ {
			if err := checkUTF8(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			if k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
				return notUTF8(path + " (a key)")
			}
			if err := checkUTF8(it.Value(), fmt.Sprintf("%s.%v", path, k), depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() && !t.Field(i).Anonymous {
				continue
			}
			if err := checkUTF8(v.Field(i), path+"."+t.Field(i).Name, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func notUTF8(field string) *errs.Error {
	return errs.Invalid(field, "utf8", "text is not valid UTF-8; send it encoded as UTF-8")
}
