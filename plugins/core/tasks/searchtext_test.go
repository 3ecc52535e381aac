package tasks

import (
	"bytes"
	"strings"
	"testing"
)

// The search text matches exactly when D9's rule does: every term in the
// folded title or the folded description, never across the two.
func TestSearchTextMatchesLikeD9(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		title, desc, search string
		want                bool
	}{
		{"Fix login", "", "LOGIN", true},
		{"ab", "cd", "bc", false}, // would span title and description
		{"ab", "cd", "ab cd", true},
		{"Straße", "", "straße", true},
		{"ÜNÏCODE", "x", "ünï", true},
		{"cache", "the parser", "cache parser", true},
		{"cache", "the parser", "cache lexer", false},
		{"", "deploy\nmetrics", "deploy", true},
	} {
		rec := &record{num: 7, project: "alpha", status: 1, priority: 2, createdMs: 10, updatedMs: 20, progress: 30, title: c.title, description: c.desc}
		e, ok := decodeSearchEntry(rec.num, searchTextValue(rec))
		if !ok || string(e.project) != "alpha" || e.status != 1 || e.priority != 2 || e.createdMs != 10 || e.updatedMs != 20 || e.progress != 30 {
			t.Fatalf("%q: entry %+v %v", c.title, e, ok)
		}
		var terms [][]byte
		q := listQuery{}
		for _, f := range strings.Fields(strings.ToLower(c.search)) {
			terms = append(terms, []byte(f))
			q.terms = append(q.terms, f)
		}
		raw := rawRecord{title: []byte(c.title), description: []byte(c.desc), priority: 2}
		if got, d9 := textMatches(e.text, terms), q.match(&raw); got != c.want || d9 != c.want {
			t.Errorf("title %q desc %q search %q: search text %v, record match %v, want %v", c.title, c.desc, c.search, got, d9, c.want)
		}
	}
}

// Decoding a stored search text never panics, and what decodes re-encodes
// to its prefix.
func FuzzDecodeSearchEntry(f *testing.F) {
	f.Add(searchTextValue(&record{num: 1, project: "p", status: 1, priority: 1, title: "t", description: "d"}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		e, ok := decodeSearchEntry(1, v)
		if !ok {
			return
		}
		if !bytes.HasSuffix(v, e.text) || !bytes.Contains(v, e.project) {
			t.Fatalf("entry %+v not inside %x", e, v)
		}
	})
}
