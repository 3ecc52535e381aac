package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The reference implementations below take a different route from the
// scanner: encoding/json finds the tokens and their offsets, and each string
// is judged by its UTF-16 code units.

// refDepth is the deepest nesting of json.Decoder's delimiters.
func refDepth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth, max := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return max
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
				if depth > max {
					max = depth
				}
			} else {
				depth--
			}
		}
	}
}

// refStringsOK reports whether every string token (keys included) is valid
// UTF-8 in its raw bytes and, through its escapes, a sequence of UTF-16 code
// units without an unpaired surrogate.
func refStringsOK(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	prev := int64(0)
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return true // syntax: judged by json.Valid
		}
		end := dec.InputOffset()
		seg := raw[prev:end]
		prev = end
		// A string token is the segment's last quoted run.
		if !bytes.HasSuffix(seg, []byte{'"'}) {
			continue
		}
		start := bytes.IndexByte(seg, '"')
		if !unitsOK(seg[start+1 : len(seg)-1]) {
			return false
		}
	}
}

func unitsOK(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	var units []uint16
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			if s[i+1] == 'u' {
				var v uint16
				for _, c := range string(s[i+2 : i+6]) {
					v = v<<4 | uint16(strings.IndexRune("0123456789abcdef", c|0x20))
				}
				units = append(units, v)
				i += 6
				continue
			}
			units = append(units, uint16(s[i+1]))
			i += 2
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		units = append(units, utf16.Encode([]rune{r})...)
		i += size
	}
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case u >= 0xD800 && u <= 0xDBFF:
			if i+1 >= len(units) || units[i+1] < 0xDC00 || units[i+1] > 0xDFFF {
				return false
			}
			i++
		case u >= 0xDC00 && u <= 0xDFFF:
			return false
		}
	}
	return true
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"content":"x","tags":["a",{"b":[1,2]}]}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, `{"a":"\\"}`,
		"{\"a\":\"\xff\"}", `[[[[[[]]]]]]`, `{"a":1e5,"b":-0.5,"c":null}`, `{"a\u00e9":"\"\\\/"}`, ``, `  `,
		`{"a":"\udc00\ud800"}`, "\"\xed\xa0\x80\"", `[1,]`, `{"a":tru}`,
	} {
		f.Add([]byte(s), 4)
	}
	f.Fuzz(func(t *testing.T, raw []byte, max int) {
		max = max%8 + 1
		if max < 1 {
			max += 8
		}
		e := Check(raw, max) // (1) never panics
		if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
			if e != nil {
				t.Fatalf("whitespace refused: %v", e)
			}
			return
		}
		valid := json.Valid(raw)
		if !valid {
			if e == nil {
				t.Fatalf("accepted invalid JSON %q", raw)
			}
			return
		}
		// (2) UTF-8 and (3) depth agree with the references.
		strOK, depth := refStringsOK(raw), refDepth(raw)
		want := strOK && depth <= max
		if (e == nil) != want {
			t.Fatalf("%q max %d: got %v, reference strings ok %v depth %d", raw, max, e, strOK, depth)
		}
		if e == nil {
			return
		}
		switch e.Details["constraint"] {
		case ConstraintUTF8:
			if strOK {
				t.Fatalf("%q: utf8 refusal but the reference finds none: %v", raw, e)
			}
		case ConstraintMaxDepth:
			if depth <= max {
				t.Fatalf("%q: depth refusal at reference depth %d ≤ %d: %v", raw, depth, max, e)
			}
		default:
			t.Fatalf("%q: valid JSON refused as %v", raw, e)
		}
	})
}
