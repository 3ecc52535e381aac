package tasks

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	bolt "go.etcd.io/bbolt"
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
		for _, b := range []string{store.BucketTaskDeps, store.BucketTaskDependents, store.BucketTaskClaims,
			store.BucketIdempotency, store.BucketIdempotencyOrder, store.BucketTaskTrigrams} {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte(store.BucketMeta))
		for _, k := range []string{"trigrams_built", "idempotency_count", "idempotency_seq"} {
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
	_ = st2.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte(store.BucketTaskTrigrams)).Stats().KeyN; n == 0 {
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
