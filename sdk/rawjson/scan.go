package rawjson

import "bytes"

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
	s.Space()
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		return 0, 0, false
	}
	s.I++
	found := false
	for {
		s.Space()
		if s.I >= len(s.B) || s.B[s.I] == '}' {
			return start, end, found
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
		switch {
		case string(name) == key:
			if found {
				return 0, 0, false
			}
			found, start, end = true, vs, s.I
		case bytes.IndexByte(name, '\\') >= 0 || bytes.EqualFold(name, []byte(key)):
			return 0, 0, false
		}
	}
}
