package sdk

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTaskRecordsCappedPerOwner: 1,000 tasks that end at once leave at most
// maxOwnerTasks records for their owner, the newest, while its working
// tasks and another owner's records stay; when every record an owner holds
// is working, a new task is refused with the working cap's error
// (docs/decisions.md D42). Before, every ended task kept its record for
// its ttl (1,000 records).
func TestTaskRecordsCappedPerOwner(t *testing.T) {
	dir := t.TempDir()
	b, err := openTasks("waiter", dir, New("waiter", "0").Logger(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	quick := func(context.Context) Result { return Result{Output: []byte(`{}`), Status: 200} }
	release := make(chan struct{})
	var working []string
	// Before the directory is removed: the working tasks end, and their
	// handlers record it.
	t.Cleanup(func() {
		close(release)
		for _, id := range working {
			_, _ = b.result(context.Background(), "local", id)
		}
	})
	blocked := func(ctx context.Context) Result {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return Result{Output: []byte(`{}`), Status: 200}
	}
	startEnded := func(c Caller) string {
		t.Helper()
		r, e := b.start(c, "waiter_wait", time.Hour, quick)
		if e != nil {
			t.Fatal(e)
		}
		if _, e := b.result(context.Background(), taskOwner(c), r.ID); e != nil {
			t.Fatal(e)
		}
		return r.ID
	}
	local := Caller{Source: "env"}
	other := Caller{ID: "u-2", Source: "api_key"}
	var others []string
	for range 3 {
		others = append(others, startEnded(other))
	}
	for range 2 {
		r, e := b.start(local, "waiter_wait", time.Hour, blocked)
		if e != nil {
			t.Fatal(e)
		}
		working = append(working, r.ID)
	}
	var ended []string
	for range 1000 {
		ended = append(ended, startEnded(local))
	}

	count := func(owner string) int {
		recs, err := b.files.all(b.skipCorrupt)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recs {
			if r.Owner == owner {
				n++
			}
		}
		return n
	}
	if n := count("local"); n > maxOwnerTasks {
		t.Fatalf("the owner of 1,000 tasks that ended at once holds %d records, want at most %d", n, maxOwnerTasks)
	}
	for _, id := range working {
		if r, e := b.get("local", id); e != nil || r.Status != TaskWorking {
			t.Errorf("working task %s: %v %v, want it kept", id, r, e)
		}
	}
	if _, e := b.get("local", ended[len(ended)-1]); e != nil {
		t.Errorf("the newest ended task was dropped: %v", e)
	}
	if _, e := b.get("local", ended[0]); e == nil || !strings.Contains(e.Message, "dropped") {
		t.Errorf("the oldest ended task: %v, want it dropped, and the answer saying it may have been", e)
	}
	if n := count("api_key:u-2"); n != len(others) {
		t.Errorf("another owner holds %d records, want its %d untouched", n, len(others))
	}
	for _, id := range others {
		if _, e := b.get("api_key:u-2", id); e != nil {
			t.Errorf("another owner's task %s: %v", id, e)
		}
	}

	// All working: refused, with the working cap's error.
	for count("local") < maxOwnerTasks || len(working) < maxOwnerTasks {
		r, e := b.start(local, "waiter_wait", time.Hour, blocked)
		if e != nil {
			t.Fatalf("task %d of %d working: %v", len(working)+1, maxOwnerTasks, e)
		}
		working = append(working, r.ID)
	}
	_, e := b.start(local, "waiter_wait", time.Hour, blocked)
	if e == nil || e.Status != 429 || e.Details["constraint"] != "maxWorking" || !strings.Contains(e.Message, "16 tasks of yours are already working") {
		t.Fatalf("a task beyond %d working ones: %v, want the working cap's 429", maxOwnerTasks, e)
	}
	if _, e := b.start(other, "waiter_wait", time.Hour, quick); e != nil {
		t.Errorf("another owner was refused by this owner's cap: %v", e)
	}
}
