package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// decodeJSON decodes one JSON value with numbers kept as json.Number, so a
// number's precision survives until a rule compares it exactly (as a
// big.Rat). Anything after the value is refused.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// jsonType is a JSON Schema type; a set of them is a bit mask. The order
// is the order types are listed in messages.
type jsonType uint8

const (
	nullType jsonType = 1 << iota
	booleanType
	numberType
	integerType
	stringType
	arrayType
	objectType
	invalidType jsonType = 0
)

var typeNames = []struct {
	t    jsonType
	name string
}{
	{nullType, "null"}, {booleanType, "boolean"}, {numberType, "number"}, {integerType, "integer"},
	{stringType, "string"}, {arrayType, "array"}, {objectType, "object"},
}

func typeNamed(name string) jsonType {
	for _, tn := range typeNames {
		if tn.name == name {
			return tn.t
		}
	}
	return invalidType
}

func (t jsonType) String() string {
	for _, tn := range typeNames {
		if tn.t == t {
			return tn.name
		}
	}
	return ""
}

// names lists the types of a set in message order.
func (t jsonType) names() []string {
	var out []string
	for _, tn := range typeNames {
		if t&tn.t != 0 {
			out = append(out, tn.name)
		}
	}
	return out
}

// typeOf is the JSON type of a decoded value; every number is "number"
// (the "integer" type is a rule on numbers). Values no JSON decoder makes
// (NaN, a Go struct) are invalidType.
func typeOf(v any) jsonType {
	switch v := v.(type) {
	case nil:
		return nullType
	case bool:
		return booleanType
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalidType
		}
		return numberType
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return invalidType
		}
		return numberType
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return numberType
	case string:
		return stringType
	case []any:
		return arrayType
	case map[string]any:
		return objectType
	case skipped:
		return jsonType(v)
	}
	return invalidType
}

// ratOf is a number's exact value; ok is false for a value that is not a
// number.
func ratOf(v any) (*big.Rat, bool) {
	switch v.(type) {
	case json.Number, float32, float64, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return new(big.Rat).SetString(fmt.Sprint(v))
	}
	return nil, false
}

// isInteger reports whether a number has no fractional part (1.0 and 1e2
// are integers).
func isInteger(v any) bool {
	if n, ok := v.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	r, ok := ratOf(v)
	return ok && r.IsInt()
}

// equal is JSON equality: numbers by value (1 equals 1.0), objects by
// their members whatever the order.
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	}
	if typeOf(a) != numberType || typeOf(b) != numberType {
		return false
	}
	if na, ok := a.(json.Number); ok {
		if nb, ok := b.(json.Number); ok && na == nb {
			return true
		}
	}
	ra, ok1 := ratOf(a)
	rb, ok2 := ratOf(b)
	return ok1 && ok2 && ra.Cmp(rb) == 0
}

// duplicates finds the first item equal to an earlier one: the earlier
// index j and the item's index i, or -1, -1.
func duplicates(arr []any) (j, i int) {
	if len(arr) <= 20 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if equal(arr[i], arr[j]) {
					return j, i
				}
			}
		}
		return -1, -1
	}
	first := make(map[string]int, len(arr))
	var b strings.Builder
	for i, item := range arr {
		b.Reset()
		canonical(&b, item)
		if j, ok := first[b.String()]; ok {
			return j, i
		}
		first[b.String()] = i
	}
	return -1, -1
}

// canonical writes a form of v that two values share exactly when they are
// equal.
func canonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for _, item := range v {
			canonical(b, item)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		b.WriteString(strconv.Quote(v))
	default:
		if r, ok := ratOf(v); ok {
			b.WriteByte('#')
			b.WriteString(r.RatString())
			return
		}
		fmt.Fprintf(b, "?%T", v)
	}
}
