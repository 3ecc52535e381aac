package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// encodedLen measures what json.Marshal writes for the decoded value, on
// every kind of value and every escape the encoder treats apart.
func TestEncodedLenIsTheCompactEncodingsLength(t *testing.T) {
	t.Parallel()
	docs := []string{
		`0`, `-1.5e+10`, `12345678901234567890`, `true`, `null`, `""`, `"plain"`, `[]`, `{}`, ` [ 1 , 2 ] `,
		`"\u0041\n\t\b\f\r\"\\\/ <>& \u2028\u2029 é 漢 😀 \ud83d\ude00 \u0001\u001f"`,
		`{"b":1,"a":[true,false,null,{"x":{"y":"z"}}],"<k>":"v&"}`,
		`{"k\u00e9y":"\u00e9","":""}`, `[[[[]]],{},[{}]]`,
		"\"raw \xff byte\"",
	}
	for _, doc := range docs {
		v, err := decodeGeneric([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		want, _ := json.Marshal(v)
		got, ok := encodedLen([]byte(doc))
		if !ok || got != len(want) {
			t.Errorf("%s: got %d (%v), want %d (%s)", doc, got, ok, len(want), want)
		}
	}
	if _, ok := encodedLen([]byte(`{"a":1,"b":{"c":1,"c":2}}`)); ok {
		t.Error("a repeated key was measured; only decoding tells what it keeps")
	}
}

// A large array is measured without being decoded.
func TestEncodedLenOfALargeArray(t *testing.T) {
	t.Parallel()
	doc := []byte(`[` + strings.Repeat(`0,`, MaxValueBytes) + `0]`)
	got, ok := encodedLen(doc)
	if !ok || got != len(doc) {
		t.Fatalf("got %d %v, want %d", got, ok, len(doc))
	}
}
