package tasks

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// TestUnstoredVariantsAreDroppedAndListsAnswerAlike: a store indexed when
// every order had an index of its own loses the entries no list reads any
// more on the next open, and every sort answers as before.
func TestUnstoredVariantsAreDroppedAndListsAnswerAlike(t *testing.T) {
	pgtest.EachStore(t, testUnstoredVariants)
}

func testUnstoredVariants(t *testing.T) {
	f := newFixture(t, "alpha", "beta")
	for i := 0; i < 30; i++ {
		in := CreateInput{Title: "task", Project: []string{"alpha", "beta"}[i%2], Priority: ptr(Priorities[i%4])}
		id := f.create(t, in).TaskID
		if i%3 == 0 {
			f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusTodo), Progress: ptr(float64(i % 7 * 10))})
		}
		if i == 20 {
			f.clock.freeze() // the rest share one time: runs of equal values
		}
	}
	var queries []ListInput
	for _, by := range SortKeys {
		for _, order := range []string{OrderAsc, OrderDesc} {
			queries = append(queries,
				ListInput{SortBy: ptr(by), SortOrder: ptr(order), Limit: ptr(100)},
				ListInput{SortBy: ptr(by), SortOrder: ptr(order), Limit: ptr(4), Offset: ptr(5), Project: ptr("beta")},
				ListInput{SortBy: ptr(by), SortOrder: ptr(order), Limit: ptr(3), Status: []string{StatusTodo}})
		}
	}
	answers := func() []ListOutput {
		var out []ListOutput
		for _, q := range queries {
			got, err := f.svc.List(q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}
	before := answers()
	// The same lists through the search path, which sorts in memory and
	// reads no sorted index: every task's title holds "task", and a status
	// filter naming every status keeps the search off the sorted index.
	for i, q := range queries {
		q.Search = ptr("task")
		if q.Status == nil {
			q.Status = append([]string(nil), Statuses...)
		}
		want, err := f.svc.List(q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before[i], want) {
			t.Fatalf("List(%s) from the sorted index\n got %d %v\nwant %d %v", describe(q), before[i].TotalCount, ids(before[i].Tasks), want.TotalCount, ids(want.Tasks))
		}
	}
	// Write the entries an older layout kept, and forget the drop.
	if err := f.st.Update(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(store.BucketTaskSorted))
		c := tasksBucket(tx).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) != 8 {
				continue
			}
			rec, _, err := loadRecord(tx, binary.BigEndian.Uint64(k))
			if err != nil {
				return err
			}
			for v := byte(0); v < byte(len(SortKeys)*2); v++ {
				if storedVariant(v) {
					continue
				}
				for _, scope := range [][]byte{scopeAll(), scopeProject(rec.project)} {
					if err := b.Put(appendSortedKey(nil, rec, v, scope), nil); err != nil {
						return err
					}
				}
			}
		}
		return tx.Bucket([]byte(store.BucketMeta)).Delete(metaUnstoredDropped)
	}); err != nil {
		t.Fatal(err)
	}
	if n := unstoredEntries(t, f.st); n != 3*2*30 {
		t.Fatalf("%d entries of unstored variants written, want %d", n, 3*2*30)
	}
	f.svc = New(f.st, Config{Clock: f.clock.now})
	if err := f.svc.IndexError(); err != nil {
		t.Fatal(err)
	}
	if n := unstoredEntries(t, f.st); n != 0 {
		t.Fatalf("%d entries of unstored variants left after open", n)
	}
	if after := answers(); !reflect.DeepEqual(after, before) {
		t.Fatal("lists answer differently after the drop")
	}
}

func unstoredEntries(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx kv.Tx) error {
		c := tx.Bucket([]byte(store.BucketTaskSorted)).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if !storedVariant(k[0]) {
				n++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
