package tasks

import (
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

func TestTermCover(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		term string
		want []int
	}{
		{"abc", []int{0}},
		{"abcd", []int{0, 1}},
		{"aaaa", []int{0, 1}},
		{"abab", []int{0, 1}},
		{"abcdef", []int{0, 3}},
		{"kestrel", []int{0, 3, 4}},
		{"abcdefghi", []int{0, 3, 6}},
	} {
		if got := termCover(c.term); !slices.Equal(got, c.want) {
			t.Errorf("termCover(%q) = %v, want %v", c.term, got, c.want)
		}
	}
}

func TestTrigramPositions(t *testing.T) {
	t.Parallel()
	got := trigramPositions("AAAA", "xaaa")
	// Joined text "aaaa\nxaaa": "aaa" at 0, 1 and 6; "xaa" at 5.
	want := map[[3]byte][]int{{'a', 'a', 'a'}: {0, 1, 6}, {'x', 'a', 'a'}: {5}}
	if len(got) != len(want) {
		t.Fatalf("trigrams %v", got)
	}
	for g, ps := range want {
		for p := 0; p < 10; p++ {
			if hasPosition(got[g], p) != slices.Contains(ps, p) {
				t.Errorf("%q at %d: got %v", g, p, hasPosition(got[g], p))
			}
		}
	}
}

// searchVocab has repeated and overlapping trigrams: a term's trigrams can
// all occur in a text that does not hold the term ("abab" in "abaxbab").
var searchVocab = []string{"aaaa", "aaa", "aa", "abab", "ababab", "aba", "bab", "abaxbab", "banana", "nan", "ana",
	"kestrel", "kes", "trel", "Straße", "STRASSE", "login", "log"}

func searchText(rng *rand.Rand, n int) string {
	var w []string
	for i := 0; i < n; i++ {
		v := searchVocab[rng.IntN(len(searchVocab))]
		if rng.IntN(4) == 0 {
			// Glue two words so terms also match across word parts.
			v += searchVocab[rng.IntN(len(searchVocab))]
		}
		w = append(w, v)
	}
	return strings.Join(w, " ")
}

// TestExactSearchDifferential checks search from positional postings
// against the reference: random texts rich in repeated trigrams, updated
// meanwhile; one and two terms; postings pending and written; postings of some tasks stripped of their
// positions (as a build before positions wrote them), which must then be
// verified against the search text.
func TestExactSearchDifferential(t *testing.T) { pgtest.EachStore(t, testExactSearchDifferential) }

func testExactSearchDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	f := newFixture(t, "alpha", "beta")
	m := &diffModel{tasks: map[string]Task{}}
	walked := 0
	for step := 0; step < 150; step++ {
		if rng.IntN(3) > 0 || len(m.order) < 5 {
			in := CreateInput{Title: searchText(rng, 1+rng.IntN(3)), Project: []string{"alpha", "beta"}[rng.IntN(2)]}
			if rng.IntN(2) == 0 {
				in.Description = ptr(searchText(rng, rng.IntN(4)))
			}
			id := f.create(t, in).TaskID
			m.order = append(m.order, id)
			m.tasks[id] = f.get(t, id)
		} else {
			id := m.order[rng.IntN(len(m.order))]
			u := UpdateInput{TaskID: id, Description: ptr(searchText(rng, rng.IntN(4)))}
			if rng.IntN(2) == 0 {
				u.Priority = ptr(Priorities[rng.IntN(4)])
			}
			f.update(t, u)
			m.tasks[id] = f.get(t, id)
		}
		if rng.IntN(10) == 0 {
			stripPositions(t, f.st, rng)
		}
		// Queries see tasks whose postings are pending, written, and
		// written then pending again (searchpending.go).
		if rng.IntN(8) == 0 {
			if err := f.svc.FlushPending(); err != nil {
				t.Fatal(err)
			}
		}
		for q := 0; q < 6; q++ {
			terms := []string{searchVocab[rng.IntN(len(searchVocab))]}
			if rng.IntN(3) == 0 {
				terms = append(terms, searchVocab[rng.IntN(len(searchVocab))])
			}
			in := ListInput{Search: ptr(strings.Join(terms, " "))}
			if rng.IntN(2) == 0 {
				in.Limit = ptr(1 + rng.IntN(5))
			}
			if rng.IntN(2) == 0 {
				in.Offset = ptr(rng.IntN(6))
			}
			if rng.IntN(2) == 0 {
				in.SortBy = ptr(SortKeys[rng.IntN(len(SortKeys))])
			}
			if rng.IntN(2) == 0 {
				in.SortOrder = ptr([]string{OrderAsc, OrderDesc}[rng.IntN(2)])
			}
			if rng.IntN(4) == 0 {
				in.Project = ptr("beta")
			}
			got, err := f.svc.List(in)
			if err != nil {
				t.Fatal(err)
			}
			want := m.list(in)
			if !slices.Equal(got.Tasks, want.Tasks) || got.TotalCount != want.TotalCount {
				t.Fatalf("step %d: List(%s)\n got %d %v\nwant %d %v", step, describe(in), got.TotalCount, ids(got.Tasks), want.TotalCount, ids(want.Tasks))
			}
			lq, err := in.validate()
			if err != nil {
				t.Fatal(err)
			}
			_ = f.st.View(func(tx kv.Tx) error {
				hits, ok := exactSearchHits(tx, lq.terms)
				if short := slices.IndexFunc(lq.terms, func(s string) bool { return len(s) < 3 }) >= 0; ok == short {
					t.Fatalf("exactSearchHits(%q) ok = %v", lq.terms, ok)
				}
				if ok && in.Project == nil && len(hits) != want.TotalCount {
					t.Fatalf("exactSearchHits(%q): %d hits, want %d", lq.terms, len(hits), want.TotalCount)
				}
				if ok && in.Project == nil && hitsWalkCheap(tx, lq, len(hits)) {
					walked++
				}
				return nil
			})
		}
	}
	if walked < 100 {
		t.Fatalf("only %d queries paged by walking the sorted index", walked)
	}
}

// stripPositions empties the posting values of a random third of the
// tasks, as a build from before positions left them.
func stripPositions(t *testing.T, st *store.Store, rng *rand.Rand) {
	t.Helper()
	if err := st.Update(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(store.BucketTaskTrigrams))
		var keys [][]byte
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) > 0 && k[10]%3 == byte(rng.IntN(3)) {
				keys = append(keys, slices.Clone(k))
			}
		}
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// FuzzTrigramPositions checks the posting values against the text they
// index: a trigram is recorded at exactly the offsets of the joined text
// where it occurs, never across the newline; and a term holds at an offset
// exactly when its covering trigrams do. Arbitrary values never panic.
func FuzzTrigramPositions(f *testing.F) {
	f.Add("abab", "aaaa", "aba", []byte{0x80})
	f.Add("Straße", "kestrel trel", "kestrel", []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, title, description, term string, junk []byte) {
		_ = hasPosition(junk, len(junk))
		pos := trigramPositions(title, description)
		tl := lowerText(title)
		joined := tl + "\n" + lowerText(description)
		for p := 0; p+3 <= len(joined); p++ {
			var g [3]byte
			copy(g[:], joined[p:p+3])
			spans := p <= len(tl) && p+3 > len(tl)
			if hasPosition(pos[g], p) == spans {
				t.Fatalf("%q at %d: recorded %v, spans the newline %v", g, p, !spans, spans)
			}
		}
		if len(term) < 3 || strings.ContainsAny(term, "\n") {
			return
		}
		for s := 0; s+len(term) <= len(joined); s++ {
			all := true
			for _, o := range termCover(term) {
				var g [3]byte
				copy(g[:], term[o:o+3])
				all = all && hasPosition(pos[g], s+o)
			}
			if all != (joined[s:s+len(term)] == term) {
				t.Fatalf("term %q at %d in %q: covered %v", term, s, joined, all)
			}
		}
	})
}

// TestPendingPostingsAnswerExactly: with postings pending (a fresh task, a
// task whose text changed after its postings were written) every search
// path answers as the written postings do, and a flush writes exactly the
// postings a direct write would have.
func TestPendingPostingsAnswerExactly(t *testing.T) { pgtest.EachStore(t, testPendingPostings) }

func testPendingPostings(t *testing.T) {
	f := newFixture(t, "alpha")
	a := f.create(t, CreateInput{Title: "kestrel login", Project: "alpha"}).TaskID
	b := f.create(t, CreateInput{Title: "banana", Description: ptr("abab straße"), Project: "alpha"}).TaskID
	search := func(term string) []string {
		t.Helper()
		out, err := f.svc.List(ListInput{Search: ptr(term), Limit: ptr(100)})
		if err != nil {
			t.Fatal(err)
		}
		return ids(out.Tasks)
	}
	pending := func() int {
		n := 0
		_ = f.st.View(func(tx kv.Tx) error { n = len(pendingNums(tx)); return nil })
		return n
	}
	check := func(when string, want map[string][]string) {
		t.Helper()
		for term, w := range want {
			if got := search(term); !slices.Equal(got, w) {
				t.Errorf("%s: search %q = %v, want %v", when, term, got, w)
			}
		}
	}
	if pending() != 2 {
		t.Fatalf("%d tasks pending after two creates, want 2", pending())
	}
	check("pending", map[string][]string{"kestrel": {a}, "ABAB": {b}, "login": {a}, "nothing": nil})
	if err := f.svc.FlushPending(); err != nil {
		t.Fatal(err)
	}
	if pending() != 0 {
		t.Fatalf("%d tasks pending after a flush", pending())
	}
	check("written", map[string][]string{"kestrel": {a}, "ABAB": {b}, "login": {a}})
	// The written postings of b are stale once its text changes.
	f.update(t, UpdateInput{TaskID: b, Description: ptr("kestrel")})
	check("changed, pending", map[string][]string{"kestrel": {b, a}, "ABAB": nil, "straße": nil, "banana": {b}})
	written := dumpBuckets(t, f.st, []string{store.BucketTaskTrigrams})
	if err := f.svc.FlushPending(); err != nil {
		t.Fatal(err)
	}
	check("changed, written", map[string][]string{"kestrel": {b, a}, "ABAB": nil, "straße": nil, "banana": {b}})
	after := dumpBuckets(t, f.st, []string{store.BucketTaskTrigrams})
	if maps.Equal(written, after) {
		t.Fatal("the flush wrote nothing for the changed task")
	}
	// The same postings as writing every task's text directly.
	if err := f.st.Update(func(tx kv.Tx) error {
		if err := tx.Clear([]byte(store.BucketTaskTrigrams)); err != nil {
			return err
		}
		c := tasksBucket(tx).Cursor()
		var raw rawRecord
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			if err := decodeRaw(binary.BigEndian.Uint64(k), v, &raw); err != nil {
				return err
			}
			if err := writeTrigrams(tx, raw.num, nil, string(raw.title), string(raw.description)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if direct := dumpBuckets(t, f.st, []string{store.BucketTaskTrigrams}); !maps.Equal(direct, after) {
		t.Fatalf("flushed postings (%d) differ from direct ones (%d)", len(after), len(direct))
	}
}
