package engine

import (
	"encoding/json"
	"hash/maphash"
	"strings"
	"unicode/utf8"
)

// encodedLen is len(json.Marshal(decodeGeneric(data))),
// measured on the raw text: a value far over MaxValueBytes is refused
// without building its tree, which costs tens of bytes a token (docs/decisions.md D33).
// ok is false for data that is not JSON, and when an object repeats a key
// (the decoded value keeps one): then only decoding tells.
func encodedLen(data []byte) (n int, ok bool) {
	if !json.Valid(data) {
		return 0, false
	}
	m := lenMeter{s: scan{B: data}}
	m.s.Space()
	n, ok = m.value()
	return n, ok
}

type lenMeter struct {
	s    scan
	seed maphash.Seed
	str  []byte
}

func (m *lenMeter) value() (int, bool) {
	s := &m.s
	start := s.I
	switch s.B[s.I] {
	case '"':
		s.SkipString()
		return m.stringLen(s.B[start:s.I])
	case '[':
		s.I++
		n, items := 2, 0
		for {
			s.Space()
			switch s.B[s.I] {
			case ']':
				s.I++
				return n, true
			case ',':
				s.I++
				continue
			}
			if items > 0 {
				n++
			}
			items++
			l, ok := m.value()
			if !ok {
				return 0, false
			}
			n += l
		}
	case '{':
		if m.seed == (maphash.Seed{}) {
			m.seed = maphash.MakeSeed()
		}
		s.I++
		n := 2
		seen := map[uint64]struct{}{}
		for {
			s.Space()
			switch s.B[s.I] {
			case '}':
				s.I++
				return n, true
			case ',':
				s.I++
				continue
			}
			ks := s.I
			s.SkipString()
			kl, ok := m.stringLen(s.B[ks:s.I])
			if !ok {
				return 0, false
			}
			// A repeated key, or two keys with one hash: decode instead.
			h := maphash.Bytes(m.seed, m.str)
			if _, dup := seen[h]; dup {
				return 0, false
			}
			seen[h] = struct{}{}
			s.Space()
			s.I++ // ':'
			s.Space()
			vl, ok := m.value()
			if !ok {
				return 0, false
			}
			if len(seen) > 1 {
				n++
			}
			n += kl + 1 + vl
		}
	}
	// A number (kept as written) or a literal.
	for s.I < len(s.B) && !strings.ContainsRune(",}] \t\r\n", rune(s.B[s.I])) {
		s.I++
	}
	return s.I - start, true
}

// stringLen is the encoded length of the JSON string lit as json.Marshal
// writes it once decoded; the decoded text is left in m.str.
func (m *lenMeter) stringLen(lit []byte) (int, bool) {
	if !hasEscapes(lit) && utf8.Valid(lit) {
		m.str = lit[1 : len(lit)-1] // as it is decoded, uncopied
	} else {
		var s string
		if json.Unmarshal(lit, &s) != nil {
			return 0, false
		}
		m.str = []byte(s)
	}
	n := 2
	for i := 0; i < len(m.str); {
		b := m.str[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRune(m.str[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n, true
}

func hasEscapes(lit []byte) bool {
	for _, b := range lit[1 : len(lit)-1] {
		if b == '\\' {
			return true
		}
	}
	return false
}

// scan walks valid JSON (the engine depends on nothing but Go).
type scan struct {
	B []byte
	I int
}

func (s *scan) Space() {
	for s.I < len(s.B) && strings.ContainsRune(" \t\r\n", rune(s.B[s.I])) {
		s.I++
	}
}

func (s *scan) SkipString() {
	for s.I++; s.I < len(s.B); s.I++ {
		switch s.B[s.I] {
		case '\\':
			s.I++
		case '"':
			s.I++
			return
		}
	}
}
