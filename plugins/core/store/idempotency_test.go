package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

type idemOut struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

func clientKey(key, tool, args string) idempotency.Key {
	return idempotency.Key{Key: key, Client: true}.For(tool, []byte(args))
}

func derivedKey(key, tool, args string) idempotency.Key {
	return idempotency.Key{Key: key}.For(tool, []byte(args))
}

// once runs one keyed write at now, which draws a task number.
func once(t *testing.T, s *Store, k idempotency.Key, now time.Time, runs *int) (idemOut, bool, error) {
	t.Helper()
	var out idemOut
	var replayed bool
	err := s.Commit(func(tx kv.Tx) error {
		var err error
		out, replayed, err = Once(tx, k, now, func() (idemOut, error) {
			*runs++
			n, err := NextID(tx, CounterTask)
			return idemOut{ID: fmt.Sprint("T-", n), N: *runs}, err
		})
		return err
	})
	return out, replayed, err
}

// A key's first call writes and records; a repeat of the same call returns
// the recorded output and runs nothing; the same key with another tool or
// other arguments is a 409 and runs nothing (docs/decisions.md D42).
func TestOnceRecordsAndReplays(t *testing.T) { pgtest.EachStore(t, testOnceRecordsAndReplays) }

func testOnceRecordsAndReplays(t *testing.T) {
	s, _ := openEach(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := 0
	for _, kind := range []struct {
		name string
		key  func(key, tool, args string) idempotency.Key
	}{{"client", clientKey}, {"derived", derivedKey}} {
		t.Run(kind.name, func(t *testing.T) {
			before := runs
			first, rep, err := once(t, s, kind.key(kind.name+"-1", "task_create", `{"title":"a","labels":["x"]}`), now, &runs)
			if err != nil || rep || runs != before+1 {
				t.Fatalf("first call %+v replayed=%v %v", first, rep, err)
			}
			again, rep, err := once(t, s, kind.key(kind.name+"-1", "task_create", `{"labels":["x"], "title":"a"}`), now.Add(time.Second), &runs)
			if err != nil || !rep || again != first || runs != before+1 {
				t.Fatalf("replay %+v replayed=%v %v runs=%d", again, rep, err, runs)
			}
			for what, k := range map[string]idempotency.Key{
				"other arguments": kind.key(kind.name+"-1", "task_create", `{"title":"b","labels":["x"]}`),
				"other tool":      kind.key(kind.name+"-1", "task_update", `{"title":"a","labels":["x"]}`),
			} {
				_, _, err := once(t, s, k, now.Add(2*time.Second), &runs)
				var e *errs.Error
				if !errors.As(err, &e) || e.Status != 409 || e.Details["constraint"] != "sameCall" || runs != before+1 {
					t.Errorf("%s under the key: %v, %d runs; want 409 sameCall and no write", what, err, runs-before)
				}
			}
		})
	}
	// No key: every call writes, nothing is recorded.
	before := runs
	for range 2 {
		if _, rep, err := once(t, s, idempotency.Key{}.For("task_create", []byte(`{}`)), now, &runs); err != nil || rep {
			t.Fatal(err, rep)
		}
	}
	if runs != before+2 {
		t.Fatalf("unkeyed runs %d, want 2", runs-before)
	}
	_ = s.View(func(tx kv.Tx) error {
		if c, d := IdempotencyHeld(tx, now); c != 1 || d != 1 {
			t.Errorf("held %d client and %d derived keys, want 1 and 1", c, d)
		}
		return nil
	})
}

// A failed write records nothing, so the key's next call runs again.
func TestOnceFailureRecordsNothing(t *testing.T) { pgtest.EachStore(t, testOnceFailureRecordsNothing) }

func testOnceFailureRecordsNothing(t *testing.T) {
	s, _ := openEach(t)
	now := time.Now()
	k := clientKey("k", "x", `{}`)
	err := s.Commit(func(tx kv.Tx) error {
		_, _, err := Once(tx, k, now, func() (idemOut, error) { return idemOut{}, fmt.Errorf("refused") })
		return err
	})
	if err == nil || err.Error() != "refused" {
		t.Fatalf("err %v", err)
	}
	runs := 0
	if _, rep, err := once(t, s, k, now, &runs); err != nil || rep || runs != 1 {
		t.Fatalf("the key's next call after a failure: replayed=%v %v runs=%d; want it to run", rep, err, runs)
	}
}

// Retention is by time whatever the write rate: a client's key is honoured
// for 24 hours after any number of later writes (the finding: forgotten
// after 10,143 later writes), a derived key for 10 minutes; past its ring
// a key is forgotten and its bucket emptied, so storage is bounded by time.
func TestIdempotencyRetentionIsByTime(t *testing.T) {
	pgtest.EachStore(t, testIdempotencyRetentionIsByTime)
}

func testIdempotencyRetentionIsByTime(t *testing.T) {
	s, _ := openEach(t)
	t0 := time.Date(2026, 1, 1, 23, 59, 59, 0, time.UTC) // the last second of a window
	runs := 0
	client := clientKey("agent-retry", "task_create", `{"title":"once"}`)
	derived := derivedKey("relay:7", "task_create", `{"title":"once"}`)
	first, _, err := once(t, s, client, t0, &runs)
	if err != nil {
		t.Fatal(err)
	}
	firstDerived, _, err := once(t, s, derived, t0, &runs)
	if err != nil {
		t.Fatal(err)
	}
	// 20,000 later keys of both kinds over the next minutes: twice the
	// number that used to push a key out.
	const later = 20000
	for b := range later / 1000 {
		err := s.Update(func(tx kv.Tx) error {
			for i := range 1000 {
				n := b*1000 + i
				at := t0.Add(time.Duration(n) * 25 * time.Millisecond)
				k := derivedKey(fmt.Sprint("relay:", n+8), "task_update", `{}`)
				if n%2 == 0 {
					k = clientKey(fmt.Sprint("c", n), "task_update", `{}`)
				}
				if err := Outcomes(tx, at).SaveOutcome(k, k.Fingerprint(), []byte(`{}`)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(k idempotency.Key, at time.Time, want idemOut, honoured bool) {
		t.Helper()
		before := runs
		got, rep, err := once(t, s, k, at, &runs)
		switch {
		case err != nil:
			t.Errorf("%s at +%v: %v", k.Key, at.Sub(t0), err)
		case honoured && (!rep || got != want || runs != before):
			t.Errorf("%s at +%v after %d later writes: replayed=%v %+v, %d runs; want the first outcome %+v", k.Key, at.Sub(t0), later, rep, got, runs-before, want)
		case !honoured && rep:
			t.Errorf("%s at +%v still honoured; its ring should have let it go", k.Key, at.Sub(t0))
		}
	}
	check(client, t0.Add(time.Hour), first, true)
	check(derived, t0.Add(idempotency.DerivedHold), firstDerived, true)
	check(client, t0.Add(idempotency.ClientHold), first, true)
	// Forgotten once past its ring: 3 windows of 5 minutes, 5 of 6 hours.
	check(derived, t0.Add(15*time.Minute+time.Second), idemOut{}, false)
	check(client, t0.Add(30*time.Hour+time.Second), idemOut{}, false)
	// A day and a half later the later keys are gone too: what a store
	// keeps is bounded by time.
	_ = s.View(func(tx kv.Tx) error {
		if c, d := IdempotencyHeld(tx, t0.Add(31*time.Hour)); c > 2 || d > 2 {
			t.Errorf("%d client and %d derived keys held 31 hours on; want only the two just written", c, d)
		}
		return nil
	})
}

// A million later writes, a client key still honoured (bbolt: the ring
// costs one put per key, so the store test can afford it).
func TestIdempotencyKeyOutlivesAMillionWrites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a million records")
	}
	s, err := Open(t.TempDir()+"/core.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	runs := 0
	client := clientKey("k", "task_create", `{"title":"once"}`)
	first, _, err := once(t, s, client, t0, &runs)
	if err != nil {
		t.Fatal(err)
	}
	later, batch := 1000000, 50000
	if raceDetector {
		// make test runs this package under -race only, where a million
		// puts take minutes: 200,000 is still twenty times the count
		// that used to push a key out.
		later = 200000
	}
	for b := range later / batch {
		err := s.Update(func(tx kv.Tx) error {
			for i := range batch {
				n := b*batch + i
				k := derivedKey(fmt.Sprint("relay:", n), "task_update", `{}`)
				if n%10 == 0 {
					k = clientKey(fmt.Sprint("c", n), "task_update", `{}`)
				}
				// 11 writes a millisecond: a million in 90 seconds.
				if err := Outcomes(tx, t0.Add(time.Duration(n)*time.Millisecond/11)).SaveOutcome(k, k.Fingerprint(), []byte(`{"task_id":"T-1"}`)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, rep, err := once(t, s, client, t0.Add(23*time.Hour), &runs)
	if err != nil || !rep || got != first || runs != 1 {
		t.Fatalf("after %d later writes: replayed=%v %+v %v, %d runs; want the first outcome", later, rep, got, err, runs)
	}
}
