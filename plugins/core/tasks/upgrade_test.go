package tasks

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// downgradeToV2 turns a store file into the layout the release before the
// search index, dependencies, claims and idempotency records wrote: schema
// version 2, without their buckets and meta keys. Task records themselves
// have the same format in both.
func downgradeToV2(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([]string{store.BucketTaskDeps, store.BucketTaskDependents, store.BucketTaskClaims,
			store.BucketTaskTrigrams, store.BucketTaskSearchText}, store.IdempotencyBuckets()...) {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte(store.BucketMeta))
		for _, k := range []string{"trigrams_built", "search_text_built", "idempotency_count"} {
			if err := meta.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return meta.Put([]byte("user_version"), store.U64(2))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An older store opens, migrates, gets its search index built from the
// stored tasks, and answers every query as before.
func TestOlderStoreUpgradesAndAnswersIdentically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(st, Config{})
	for _, p := range []string{"alpha", "beta"} {
		if _, err := svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{"Fix login cache", "Straße parser", "Ünïcode LOGIN", "deploy metrics", "cache the cache", "x"}
	for i := 0; i < 60; i++ {
		in := CreateInput{Title: texts[i%len(texts)], Project: []string{"alpha", "beta"}[i%2], Description: ptr(texts[(i*7)%len(texts)] + " details")}
		if _, err := svc.Create("a", in); err != nil {
			t.Fatal(err)
		}
	}
	queries := []ListInput{
		{Search: ptr("login")}, {Search: ptr("CACHE")}, {Search: ptr("straße")}, {Search: ptr("ünï")},
		{Search: ptr("che det")}, {Search: ptr("x")}, {Search: ptr("nothing-like-this")},
		{Search: ptr("cache"), Project: ptr("beta"), SortBy: ptr(SortCreated), SortOrder: ptr(OrderAsc), Limit: ptr(5), Offset: ptr(3)},
		{Project: ptr("alpha")}, {},
	}
	before := map[int]ListOutput{}
	for i, q := range queries {
		if before[i], err = svc.List(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	downgradeToV2(t, path)

	st2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.UserVersion() != store.CurrentVersion {
		t.Fatalf("version %d after upgrade", st2.UserVersion())
	}
	// Several rebuild transactions, as a large store needs.
	saved := rebuildBatch
	rebuildBatch = 7
	svc2 := New(st2, Config{})
	rebuildBatch = saved
	if err := svc2.IndexError(); err != nil {
		t.Fatal(err)
	}
	_ = st2.View(func(tx kv.Tx) error {
		if n := tx.Bucket([]byte(store.BucketTaskTrigrams)).Count(); n == 0 {
			t.Error("search index not rebuilt")
		}
		if _, ok := searchCandidates(tx, []string{"login"}); !ok {
			t.Error("search index not marked built")
		}
		return nil
	})
	for i, q := range queries {
		got, err := svc2.List(q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Tasks, before[i].Tasks) || got.TotalCount != before[i].TotalCount {
			t.Fatalf("query %d (%s): %v (%d), before %v (%d)", i, describe(q), ids(got.Tasks), got.TotalCount, ids(before[i].Tasks), before[i].TotalCount)
		}
	}
	// The upgraded store takes the new features.
	if _, err := svc2.Create("a", CreateInput{Title: "after", Project: "alpha", DependsOn: []string{"T-1"}}); err != nil {
		t.Fatal(err)
	}
}

// listIndexBuckets are the buckets schema v5 added.
var listIndexBuckets = []string{store.BucketTaskSorted, store.BucketTaskCounts, store.BucketTaskReady, store.BucketTaskReadyOf, store.BucketTaskWaiting, store.BucketTaskFacets}

// downgradeToV4 turns a store file into the layout the release before the
// list and ready indexes wrote: schema version 4, without their buckets and
// meta key. Everything else is the same.
func downgradeToV4(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range listIndexBuckets {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte(store.BucketMeta))
		if err := meta.Delete(metaListIndexUpto); err != nil {
			return err
		}
		return meta.Put([]byte("user_version"), store.U64(4))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// dumpBuckets copies every key and value of the named buckets.
func dumpBuckets(t *testing.T, st *store.Store, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.View(func(tx kv.Tx) error {
		for _, name := range names {
			if err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				out[name+"\x00"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A store written by the release before the list indexes (schema v4) opens,
// builds its sorted indexes, counters and ready indexes from the stored
// tasks — byte for byte what the writes maintained — and answers task_list
// and task_next_actions identically.
func TestV4StoreGetsListIndexesAndAnswersIdentically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	for _, p := range []string{"alpha", "beta"} {
		if _, err := svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 80; i++ {
		in := CreateInput{Title: fmt.Sprint("task ", i), Project: []string{"alpha", "beta"}[i%2], Priority: ptr(Priorities[i%4])}
		if i >= 10 && i%3 == 0 {
			in.ParentID = ptr(FormatTaskID(uint64(i - 10 + 1)))
		}
		if i >= 10 && i%4 == 1 {
			in.DependsOn = []string{FormatTaskID(uint64(i - 8 + 1))}
		}
		out, err := svc.Create("a", in)
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range [][]string{{StatusTodo}, {StatusTodo, StatusInProgress}, {StatusTodo, StatusInProgress, StatusReview, StatusDone}, {StatusCancelled}}[i%5%4] {
			if _, err := svc.Update("a", UpdateInput{TaskID: out.TaskID, Status: ptr(to), Progress: ptr(float64(i % 7 * 10))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lists []ListInput
	for _, sortBy := range SortKeys {
		for _, order := range []string{OrderAsc, OrderDesc} {
			lists = append(lists,
				ListInput{SortBy: ptr(sortBy), SortOrder: ptr(order), Limit: ptr(500)},
				ListInput{SortBy: ptr(sortBy), SortOrder: ptr(order), Project: ptr("beta"), Status: []string{StatusTodo, StatusDone}, Offset: ptr(3), Limit: ptr(7)},
				ListInput{SortBy: ptr(sortBy), SortOrder: ptr(order), Priority: []string{PriorityHigh, PriorityLow}, Offset: ptr(10)})
		}
	}
	nexts := []NextInput{{Project: "alpha", Limit: ptr(100), IncludeBlocked: ptr(true)}, {Project: "beta", Limit: ptr(100), IncludeBlocked: ptr(true)}, {Project: "alpha", Limit: ptr(1)}}
	answers := func(svc *Service) ([]ListOutput, []NextOutput) {
		l := listAll(t, svc, lists)
		var n []NextOutput
		for _, in := range nexts {
			out, err := svc.NextActions(in)
			if err != nil {
				t.Fatal(err)
			}
			n = append(n, out)
		}
		return l, n
	}
	listsBefore, nextsBefore := answers(svc)
	indexesBefore := dumpBuckets(t, st, listIndexBuckets)
	if len(indexesBefore) == 0 {
		t.Fatal("no index entries written")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	downgradeToV4(t, path)

	st2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.UserVersion() != store.CurrentVersion {
		t.Fatalf("version %d after upgrade", st2.UserVersion())
	}
	saved := rebuildBatch
	rebuildBatch = 9 // several build transactions, as a large store needs
	svc2 := New(st2, Config{Clock: clock.now})
	rebuildBatch = saved
	if err := svc2.IndexError(); err != nil {
		t.Fatal(err)
	}
	if got := dumpBuckets(t, st2, listIndexBuckets); !maps.Equal(got, indexesBefore) {
		t.Fatalf("rebuilt indexes differ: %d entries, %d maintained", len(got), len(indexesBefore))
	}
	listsAfter, nextsAfter := answers(svc2)
	for i := range lists {
		if !reflect.DeepEqual(listsAfter[i], listsBefore[i]) {
			t.Fatalf("list %s: %v, before %v", describe(lists[i]), ids(listsAfter[i].Tasks), ids(listsBefore[i].Tasks))
		}
	}
	for i := range nexts {
		if !reflect.DeepEqual(nextsAfter[i], nextsBefore[i]) {
			t.Fatalf("next %d: %+v, before %+v", i, nextsAfter[i], nextsBefore[i])
		}
	}
	// The upgraded store keeps its indexes current.
	if _, err := svc2.Update("a", UpdateInput{TaskID: "T-1", Priority: ptr(PriorityCritical)}); err != nil {
		t.Fatal(err)
	}
	out, err := svc2.List(ListInput{SortBy: ptr(SortUpdated), Limit: ptr(1)})
	if err != nil || len(out.Tasks) != 1 || out.Tasks[0].TaskID != "T-1" {
		t.Fatalf("after update: %v %v", out.Tasks, err)
	}
}

// A store written by the release before the search text (schema v5) opens,
// writes every task's search text from the stored tasks — byte for byte
// what the writes maintained — and answers searches identically.
func TestV5StoreGetsSearchTextAndAnswersIdentically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	for _, p := range []string{"alpha", "beta"} {
		if _, err := svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{"Fix login cache", "Straße parser", "Ünïcode LOGIN", "deploy metrics", "cache the cache", "x"}
	for i := 0; i < 70; i++ {
		in := CreateInput{Title: texts[i%len(texts)], Project: []string{"alpha", "beta"}[i%2], Priority: ptr(Priorities[i%4]),
			Description: ptr(texts[(i*7)%len(texts)] + " details"), Labels: []string{[]string{"ui", "db"}[i%3%2]}}
		if i%3 == 0 {
			in.Assignee = ptr("ann")
		}
		out, err := svc.Create("a", in)
		if err != nil {
			t.Fatal(err)
		}
		if i%4 != 0 {
			if _, err := svc.Update("a", UpdateInput{TaskID: out.TaskID, Status: ptr(StatusTodo), Progress: ptr(float64(i % 9 * 10))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var queries []ListInput
	for _, sortBy := range SortKeys {
		queries = append(queries,
			ListInput{Search: ptr("login"), SortBy: ptr(sortBy), Limit: ptr(500)},
			ListInput{Search: ptr("CACHE det"), SortBy: ptr(sortBy), SortOrder: ptr(OrderAsc), Offset: ptr(2), Limit: ptr(5)},
			ListInput{Search: ptr("straße"), Project: ptr("beta"), Status: []string{StatusTodo}, SortBy: ptr(sortBy)},
			ListInput{Search: ptr("ca"), Priority: []string{PriorityHigh, PriorityLow}, Label: ptr("db"), SortBy: ptr(sortBy)},
			ListInput{Search: ptr("ünï"), Assignee: ptr("ann"), SortBy: ptr(sortBy)})
	}
	answers := func(svc *Service) []ListOutput { return listAll(t, svc, queries) }
	before := answers(svc)
	textBefore := dumpBuckets(t, st, []string{store.BucketTaskSearchText})
	if len(textBefore) != 70 {
		t.Fatalf("%d search text entries written, want 70", len(textBefore))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte(store.BucketTaskSearchText)); err != nil {
			return err
		}
		meta := tx.Bucket([]byte(store.BucketMeta))
		if err := meta.Delete(metaSearchTextBuilt); err != nil {
			return err
		}
		return meta.Put([]byte("user_version"), store.U64(5))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.UserVersion() != store.CurrentVersion {
		t.Fatalf("version %d after upgrade", st2.UserVersion())
	}
	saved := rebuildBatch
	rebuildBatch = 8 // several build transactions, as a large store needs
	svc2 := New(st2, Config{Clock: clock.now})
	rebuildBatch = saved
	if err := svc2.IndexError(); err != nil {
		t.Fatal(err)
	}
	if got := dumpBuckets(t, st2, []string{store.BucketTaskSearchText}); !maps.Equal(got, textBefore) {
		t.Fatalf("rebuilt search text differs: %d entries, %d maintained", len(got), len(textBefore))
	}
	after := answers(svc2)
	for i := range queries {
		if !reflect.DeepEqual(after[i], before[i]) {
			t.Fatalf("list %s: %v (%d), before %v (%d)", describe(queries[i]), ids(after[i].Tasks), after[i].TotalCount, ids(before[i].Tasks), before[i].TotalCount)
		}
	}
}

// A store whose trigram postings carry no positions (written by the release
// before them, same schema version) answers searches identically at once —
// such postings are verified against the search text — and on open gets
// every posting rewritten with its positions, byte for byte what the writes
// maintain.
func TestPositionlessPostingsGetPositionsAndAnswerIdentically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	if _, err := svc.AddProject("alpha"); err != nil {
		t.Fatal(err)
	}
	texts := []string{"abab login", "aaaa Straße", "ababab cache", "abaxbab", "kestrel LOGIN", "aaa"}
	for i := 0; i < 60; i++ {
		in := CreateInput{Title: texts[i%len(texts)], Project: "alpha", Priority: ptr(Priorities[i%4]),
			Description: ptr(texts[(i*7)%len(texts)] + " details")}
		if _, err := svc.Create("a", in); err != nil {
			t.Fatal(err)
		}
	}
	var queries []ListInput
	for _, sortBy := range SortKeys {
		for _, s := range []string{"abab", "aaaa", "login", "ABAB LOGIN", "aba details", "straße", "kestrel"} {
			queries = append(queries, ListInput{Search: ptr(s), SortBy: ptr(sortBy), Limit: ptr(7), Offset: ptr(3)},
				ListInput{Search: ptr(s), SortBy: ptr(sortBy), SortOrder: ptr(OrderAsc), Limit: ptr(500)})
		}
	}
	answers := func(svc *Service) []ListOutput { return listAll(t, svc, queries) }
	check := func(what string, got, want []ListOutput) {
		t.Helper()
		for i := range queries {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s: list %s: %v (%d), want %v (%d)", what, describe(queries[i]), ids(got[i].Tasks), got[i].TotalCount, ids(want[i].Tasks), want[i].TotalCount)
			}
		}
	}
	before := answers(svc)
	if err := svc.FlushPending(); err != nil {
		t.Fatal(err)
	}
	postings := dumpBuckets(t, st, []string{store.BucketTaskTrigrams})
	if err := st.Update(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(store.BucketTaskTrigrams))
		var keys [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, slices.Clone(k))
		}
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(store.BucketMeta)).Delete(metaPositionsBuilt)
	}); err != nil {
		t.Fatal(err)
	}
	check("positionless", answers(svc), before)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	saved := rebuildBatch
	rebuildBatch = 8
	svc2 := New(st2, Config{Clock: clock.now})
	rebuildBatch = saved
	if err := svc2.IndexError(); err != nil {
		t.Fatal(err)
	}
	if got := dumpBuckets(t, st2, []string{store.BucketTaskTrigrams}); !maps.Equal(got, postings) {
		t.Fatalf("rebuilt postings differ: %d entries, %d maintained", len(got), len(postings))
	}
	check("rebuilt", answers(svc2), before)
}

// listAll answers every query on svc, in order.
func listAll(t *testing.T, svc *Service, queries []ListInput) []ListOutput {
	t.Helper()
	var out []ListOutput
	for _, in := range queries {
		got, err := svc.List(in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}
