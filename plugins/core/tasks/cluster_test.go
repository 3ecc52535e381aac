package tasks

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// indexBuckets are the buckets the builds on open fill.
var indexBuckets = append([]string{store.BucketTaskTrigrams, store.BucketTaskSearchText}, listIndexBuckets...)

// indexPairs counts the pairs of every index bucket.
func indexPairs(t *testing.T, st *store.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	if err := st.View(func(tx kv.Tx) error {
		for _, b := range indexBuckets {
			out[b] = tx.Bucket([]byte(b)).Count()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// forgetIndexes makes st look like a store written before its indexes:
// empty index buckets and no build marks.
func forgetIndexes(t *testing.T, st *store.Store) {
	t.Helper()
	if err := st.Update(func(tx kv.Tx) error {
		for _, b := range indexBuckets {
			if err := tx.Clear([]byte(b)); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte(store.BucketMeta))
		for _, k := range [][]byte{metaTrigramsBuilt, metaTrigramsUpto, metaPositionsBuilt, metaPositionsUpto, metaSearchTextBuilt, metaSearchTextUpto, metaListIndexUpto} {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Three servers opening one database that lacks its indexes at once build
// them together, batch by batch, to exactly what one server builds alone,
// while a fourth keeps writing tasks.
func TestIndexBuildsSharedByServersOpeningAtOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	saved := rebuildBatch
	rebuildBatch = 5 // many build transactions to interleave
	defer func() { rebuildBatch = saved }()
	open := func() *store.Store {
		st, err := store.OpenPostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	first := open()
	writer := New(first, Config{})
	if _, err := writer.AddProject("alpha"); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i := 0; i < 120; i++ {
		in := CreateInput{Title: fmt.Sprint("needle ", i), Project: "alpha", Labels: []string{fmt.Sprint("l", i%3)}}
		if i%6 == 5 {
			in.DependsOn = []string{prev} // waiting while prev is open
		}
		out, err := writer.Create("a", in)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 != 0 {
			if _, err := writer.Update("a", UpdateInput{TaskID: out.TaskID, Status: ptr(StatusTodo)}); err != nil {
				t.Fatal(err)
			}
		}
		prev = out.TaskID
	}
	forgetIndexes(t, first)

	var wg sync.WaitGroup
	svcs := make([]*Service, 3)
	for i := range svcs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			svcs[i] = New(open(), Config{})
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 120; i < 150; i++ {
			if _, err := writer.Create("a", CreateInput{Title: fmt.Sprint("needle ", i), Project: "alpha"}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	for i, s := range svcs {
		if err := s.IndexError(); err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
	}
	for i, s := range svcs {
		out, err := s.List(ListInput{Search: ptr("needle 137")})
		if err != nil || out.TotalCount != 1 {
			t.Fatalf("server %d: search %+v %v", i, out, err)
		}
		all, err := s.List(ListInput{Project: ptr("alpha")})
		if err != nil || all.TotalCount != 150 {
			t.Fatalf("server %d: list total %d %v", i, all.TotalCount, err)
		}
	}
	// The writer's last tasks may still have postings pending (its
	// flusher runs 200 ms after the last write): write them before
	// counting, as a closed server would have.
	if err := writer.FlushPending(); err != nil {
		t.Fatal(err)
	}
	shared := indexPairs(t, first)
	// One server alone, from scratch, must build the same.
	forgetIndexes(t, first)
	if err := New(first, Config{}).IndexError(); err != nil {
		t.Fatal(err)
	}
	alone := indexPairs(t, first)
	for _, b := range indexBuckets {
		if shared[b] != alone[b] || alone[b] == 0 {
			t.Errorf("%s: %d pairs built by three servers at once, %d by one alone", b, shared[b], alone[b])
		}
	}
}
