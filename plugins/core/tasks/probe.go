package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// cursorProbe looks up prefix+number keys of one bucket for numbers that
// mostly come in increasing order (trigram postings, facet members): it
// steps its cursor forward over short gaps and seeks only across long ones
// or backwards, so a sweep costs about one Next per lookup instead of one
// descent from the root.
type cursorProbe struct {
	c      kv.Cursor
	prefix []byte
	// target is prefix and room for a number: find writes each key it
	// looks for here instead of allocating one.
	target []byte
	k, v   []byte
	// steps is how many entries find steps over before it seeks instead.
	steps int
	// sparse says the bucket's numbers under prefix leave gaps (trigram
	// postings), so a gap between numbers says nothing of the entries
	// between them: find always steps first.
	sparse bool
}

func newCursorProbe(b kv.Bucket, prefix []byte) *cursorProbe {
	p := &cursorProbe{c: b.Cursor(), prefix: slices.Clip(prefix), steps: 8}
	p.target = append(append(make([]byte, 0, len(prefix)+8), prefix...), make([]byte, 8)...)
	p.k, p.v = p.c.Seek(p.prefix)
	return p
}

// find returns the value stored under prefix+num and whether it exists.
func (p *cursorProbe) find(num uint64) ([]byte, bool) {
	target := p.target
	binary.BigEndian.PutUint64(target[len(p.prefix):], num)
	if p.k == nil || bytes.Compare(p.k, target) > 0 || !p.sparse && p.far(num) {
		p.k, p.v = p.c.Seek(target)
	} else {
		for i := 0; p.k != nil && bytes.Compare(p.k, target) < 0; i++ {
			if i == p.steps {
				p.k, p.v = p.c.Seek(target)
				break
			}
			p.k, p.v = p.c.Next()
		}
	}
	if !bytes.Equal(p.k, target) {
		return nil, false
	}
	return p.v, true
}

// far reports whether the current key is under the prefix with a number
// more than steps below num: numbers are distinct, so more than steps
// entries lie between, and one seek costs less than stepping over them.
func (p *cursorProbe) far(num uint64) bool {
	if len(p.k) != len(p.prefix)+8 || !bytes.HasPrefix(p.k, p.prefix) {
		return false
	}
	return num-binary.BigEndian.Uint64(p.k[len(p.prefix):]) > uint64(p.steps)
}
