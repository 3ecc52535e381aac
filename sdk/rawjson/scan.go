package rawjson

import (
	"bytes"
	"unicode/utf8"
)

// Scanner walks a JSON document already known to be valid (json.Valid, or
// Check) without decoding anything: B is the document, I the offset.
type Scanner struct {
	B []byte
	I int
}

// Space moves past whitespace.
func (s *Scanner) Space() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\r', '\n':
			s.I++
		default:
			return
		}
	}
}

// SkipString moves past the string that starts at I.
func (s *Scanner) SkipString() {
	s.I++
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case '\\':
			s.I += 2
		case '"':
			s.I++
			return
		default:
			s.I++
		}
	}
}

// Skip moves past the value that starts at I.
func (s *Scanner) Skip() {
	if s.I >= len(s.B) {
		return
	}
	switch s.B[s.I] {
	case '"':
		s.SkipString()
	case '{', '[':
		depth := 0
		for s.I < len(s.B) {
			switch s.B[s.I] {
			case '"':
				s.SkipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.I++
			if depth == 0 {
				return
			}
		}
	default: // number, true, false, null
		for s.I < len(s.B) {
			switch s.B[s.I] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			s.I++
		}
	}
}

// Member finds the value of key in the object that starts at I (after
// whitespace) and returns its offsets. ok is false when the value at I is
// not an object, when key is absent or repeated, or when another key could
// stand for it as encoding/json matches struct fields (written with escapes,
// or in another case): a caller then decodes the document instead.
func (s *Scanner) Member(key string) (start, end int, ok bool) {
	var span [1][2]int
	if !s.Members([]string{key}, span[:]) || span[0][1] == 0 {
		return 0, 0, false
	}
	return span[0][0], span[0][1], true
}

// Members finds several keys in one pass over the object that starts at I
// (after whitespace), setting spans[i] to the offsets of keys[i]'s value
// ([0, 0] when absent). false when the value at I is not an object, a key
// is repeated, or any key is written with escapes or could stand for one of
// keys in another case, as encoding/json matches struct fields.
func (s *Scanner) Members(keys []string, spans [][2]int) bool {
	s.Space()
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		return false
	}
	s.I++
	for {
		s.Space()
		if s.I >= len(s.B) || s.B[s.I] == '}' {
			return true
		}
		if s.B[s.I] == ',' {
			s.I++
			continue
		}
		ks := s.I
		s.SkipString()
		name := s.B[ks+1 : s.I-1]
		s.Space()
		s.I++ // ':'
		s.Space()
		vs := s.I
		s.Skip()
		if bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		for i, k := range keys {
			switch {
			case string(name) == k:
				if spans[i][1] > 0 {
					return false
				}
				spans[i] = [2]int{vs, s.I}
			case bytes.EqualFold(name, []byte(k)):
				return false
			}
		}
	}
}

// PlainString returns the text of a JSON string written without escapes,
// in valid UTF-8: what encoding/json would decode it to. false for anything
// else (another type, escapes, bytes encoding/json would replace).
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}
