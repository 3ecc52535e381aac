package rawjson

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// path renders the open containers as a field path in the form the schema
// validator uses: members joined by ".", elements as "[i]". Without the
// innermost key when the failure is inside that key.
func (s *scanner) path(inKey bool) string {
	var b strings.Builder
	for i := 0; i < s.depth; i++ {
		f := s.frame(i)
		if f.object {
			if inKey && i == s.depth-1 {
				break
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(unescapeKey(s.raw[f.keyStart:f.keyEnd]))
			continue
		}
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(f.index))
		b.WriteByte(']')
	}
	return b.String()
}

// unescapeKey decodes a key that already passed the scan (escapes are well
// formed, surrogates paired, bytes UTF-8); it runs only on the error path.
func unescapeKey(k []byte) string {
	var b strings.Builder
	for i := 0; i < len(k); {
		c := k[i]
		if c != '\\' || i+1 >= len(k) {
			r, size := utf8.DecodeRune(k[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		switch k[i+1] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			hi := hexValue(k[i+2 : i+6])
			if utf16.IsSurrogate(hi) && i+12 <= len(k) {
				b.WriteRune(utf16.DecodeRune(hi, hexValue(k[i+8:i+12])))
				i += 12
				continue
			}
			b.WriteRune(hi)
			i += 6
			continue
		default: // " \ /
			b.WriteByte(k[i+1])
		}
		i += 2
	}
	return b.String()
}

func hexValue(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

func itoa(n int) string { return strconv.Itoa(n) }

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func hex4String(u rune) string { return strings.ToUpper(strconv.FormatInt(int64(u)|0x10000, 16)[1:]) }

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "0x" + hexByte(c)
}
