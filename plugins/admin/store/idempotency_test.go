package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

type secretOut struct {
	ID     string `json:"id"`
	Secret string `json:"secret,omitempty"`
	Notice string `json:"secret_notice,omitempty"`
}

// keyOf is the key the host hands a plugin for principal's client key.
func keyOf(principal, tool, key string, in any) idempotency.Key {
	if key == "" {
		return idempotency.Key{}
	}
	args, _ := json.Marshal(in)
	return idempotency.Key{Key: "client:" + principal + ":" + key, Client: true}.For(tool, args)
}

func call(t *testing.T, tool, key string, in any) *Call {
	t.Helper()
	return NewCall(keyOf("env:ann", tool, key, in))
}

// writeOnce runs a keyed write that appends one outbox entry per run, and
// reports whether it ran.
func writeOnce(t *testing.T, st *Store, c *Call, now time.Time, out secretOut) (ran bool, err error) {
	t.Helper()
	err = st.Update(func(tx Tx) error {
		_, err := Once(tx, c, now, func() (secretOut, error) {
			ran = true
			seq, err := NextSeq(tx, "outbox")
			if err != nil {
				return out, err
			}
			return out, Put(tx, BucketOutbox, U64(seq), out)
		})
		return err
	})
	return ran, err
}

func outboxLen(t *testing.T, st *Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx Tx) error {
		return tx.Bucket([]byte(BucketOutbox)).ForEach(func(_, _ []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// rawContains reports whether any stored value of the idempotency buckets
// holds s.
func rawContains(t *testing.T, st *Store, s string) bool {
	t.Helper()
	found := false
	if err := st.View(func(tx Tx) error {
		for _, b := range []string{BucketIdempotency, BucketIdempotencyOrder, BucketIdempotencySealed} {
			if err := tx.Bucket([]byte(b)).ForEach(func(k, v []byte) error {
				found = found || bytes.Contains(k, []byte(s)) || bytes.Contains(v, []byte(s))
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

func TestIdempotencyRecords(t *testing.T) { pgtest.EachStore(t, testIdempotencyRecords) }

// A keyed write runs once; the same key with another input is a 409; the
// key is scoped by tool and principal; a failed write records nothing.
func testIdempotencyRecords(t *testing.T) {
	st := open(t, t.TempDir())
	now := time.Now()
	in := map[string]any{"name": "a"}
	c := call(t, "tool_a", "k1", in)
	for i := range 2 {
		ran, err := writeOnce(t, st, call(t, "tool_a", "k1", in), now, secretOut{ID: "x1"})
		if err != nil || ran != (i == 0) {
			t.Fatalf("run %d: ran %v, %v", i, ran, err)
		}
	}
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("two keyed runs wrote %d entries", n)
	}
	raw, found, err := st.Lookup(c, now)
	if err != nil || !found || string(raw) != `{"id":"x1"}` {
		t.Fatalf("lookup: %s %v %v", raw, found, err)
	}
	_, err = writeOnce(t, st, call(t, "tool_a", "k1", map[string]any{"name": "b"}), now, secretOut{ID: "x2"})
	if e, ok := errs.As(err); !ok || e.Status != 409 || e.Details["field"] != "idempotencyKey" || e.Details["constraint"] != "sameCall" {
		t.Fatalf("same key, other input: %v", err)
	}
	// Another tool under the key is another call: a 409 too.
	if ran, err := writeOnce(t, st, call(t, "tool_b", "k1", in), now, secretOut{ID: "x3"}); ran || err == nil {
		t.Fatalf("other tool: ran %v, %v; want 409", ran, err)
	}
	// Another principal's k1 is another key (the host scopes client keys).
	if ran, err := writeOnce(t, st, call(t, "tool_b", "k1b", in), now, secretOut{ID: "x3"}); !ran || err != nil {
		t.Fatalf("other key: %v %v", ran, err)
	}
	other := NewCall(keyOf("api_key:bob", "tool_a", "k1", in))
	if ran, err := writeOnce(t, st, other, now, secretOut{ID: "x4"}); !ran || err != nil {
		t.Fatalf("other principal: %v %v", ran, err)
	}
	// A failed write records nothing: the same key carries the next try.
	fc := call(t, "tool_c", "k2", in)
	if err := st.Update(func(tx Tx) error {
		_, err := Once(tx, fc, now, func() (secretOut, error) { return secretOut{ID: "bad"}, errs.Invalid("name", "x", "no") })
		return err
	}); err == nil {
		t.Fatal("the failure was lost")
	}
	if ran, err := writeOnce(t, st, call(t, "tool_c", "k2", in), now, secretOut{ID: "x5"}); !ran || err != nil {
		t.Fatalf("after a failure: %v %v", ran, err)
	}
	var count uint64
	_ = st.View(func(tx Tx) error { count = IdempotencyCount(tx); return nil })
	if count != 4 {
		t.Fatalf("count %d, want 4", count)
	}
	// Without a key nothing is looked up or recorded.
	for range 2 {
		if ran, err := writeOnce(t, st, call(t, "tool_a", "", in), now, secretOut{ID: "x"}); !ran || err != nil {
			t.Fatalf("no key: %v %v", ran, err)
		}
	}
	if n := outboxLen(t, st); n != 6 {
		t.Fatalf("outbox %d, want 6", n)
	}
}

func TestIdempotencyRetention(t *testing.T) { pgtest.EachStore(t, testIdempotencyRetention) }

// Records are kept by time only, whatever the write rate: a client's key is
// honoured 24 hours after any number of later records (it used to go after
// 10,000), a key the host derived ten minutes; the expired go, a few with
// each write and all at a sweep.
func testIdempotencyRetention(t *testing.T) {
	st := open(t, t.TempDir())
	t0 := time.Now()
	in := map[string]any{}
	if _, err := writeOnce(t, st, call(t, "tool", "old", in), t0, secretOut{ID: "o"}); err != nil {
		t.Fatal(err)
	}
	derived := func() *Call { return NewCall(idempotency.Key{Key: "relay:7"}.For("tool", []byte(`{}`))) }
	if _, err := writeOnce(t, st, derived(), t0, secretOut{ID: "d"}); err != nil {
		t.Fatal(err)
	}
	const later = 12000
	if err := st.Update(func(tx Tx) error {
		for i := range later {
			c := NewCall(keyOf("env:ann", "tool", "k"+itoaTest(i), in))
			if err := Record(tx, c, secretOut{ID: "n"}, t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := st.Lookup(call(t, "tool", "old", in), t0.Add(idempotency.ClientHold-time.Minute)); !found {
		t.Fatalf("a client's key was forgotten within its hold after %d later records", later)
	}
	if _, found, _ := st.Lookup(derived(), t0.Add(idempotency.DerivedHold-time.Second)); !found {
		t.Fatal("a derived key was forgotten within its hold")
	}
	if _, found, _ := st.Lookup(derived(), t0.Add(idempotency.DerivedHold+time.Second)); found {
		t.Fatal("a derived key outlived its hold")
	}
	if _, found, _ := st.Lookup(call(t, "tool", "old", in), t0.Add(idempotency.ClientHold+time.Minute)); found {
		t.Fatal("a record past its hold answered")
	}
	// SweepIdempotency removes what is past its hold.
	if _, err := st.SweepIdempotency(t0.Add(2 * idempotency.ClientHold)); err != nil {
		t.Fatal(err)
	}
	var count uint64
	_ = st.View(func(tx Tx) error { count = IdempotencyCount(tx); return nil })
	if count != 0 {
		t.Fatalf("after the sweep %d records remain", count)
	}
}

func itoaTest(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestIdempotencySecrets(t *testing.T) { pgtest.EachStore(t, testIdempotencySecrets) }

// A secret is never stored in the clear; a replay inside SecretWindow
// gets it back, one after it gets the notice, and the sweep erases the
// sealed copy.
func testIdempotencySecrets(t *testing.T) {
	st := open(t, t.TempDir())
	t0 := time.Now()
	const plain = "cairn_0123456789abcdef-secret"
	in := map[string]any{"name": "k"}
	mk := func() *Call { return call(t, "key_create", "r1", in).Secrets("shown once; rotate", "secret") }
	if _, err := writeOnce(t, st, mk(), t0, secretOut{ID: "key_1", Secret: plain}); err != nil {
		t.Fatal(err)
	}
	if rawContains(t, st, plain) {
		t.Fatal("the plaintext secret is in the store")
	}
	var got secretOut
	raw, found, err := st.Lookup(mk(), t0.Add(time.Minute))
	if err != nil || !found || json.Unmarshal(raw, &got) != nil || got != (secretOut{ID: "key_1", Secret: plain}) {
		t.Fatalf("inside the window: %s %v %v", raw, found, err)
	}
	// Another principal's call with the same key is another record.
	if _, found, _ := st.Lookup(NewCall(keyOf("api_key:eve", "key_create", "r1", in)), t0); found {
		t.Fatal("another principal found the record")
	}
	late := t0.Add(SecretWindow + time.Minute)
	raw, found, err = st.Lookup(mk(), late)
	got = secretOut{}
	if err != nil || !found || json.Unmarshal(raw, &got) != nil || got != (secretOut{ID: "key_1", Notice: "shown once; rotate"}) {
		t.Fatalf("after the window: %s %v %v", raw, found, err)
	}
	n, err := st.SweepIdempotency(late)
	if err != nil || n != 1 {
		t.Fatalf("sweep erased %d (%v), want 1", n, err)
	}
	if err := st.View(func(tx Tx) error {
		var r record
		if _, err := Get(tx, BucketIdempotency, mk().id, &r); err != nil {
			return err
		}
		if r.Sealed != nil {
			t.Error("the sealed secret outlived the sweep")
		}
		if k, _ := tx.Bucket([]byte(BucketIdempotencySealed)).Cursor().First(); k != nil {
			t.Error("the sealed index still lists it")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Even a clock turned back cannot bring the secret back.
	raw, _, _ = st.Lookup(mk(), t0)
	if bytes.Contains(raw, []byte(plain)) {
		t.Fatalf("after the sweep a replay got the secret: %s", raw)
	}
}

// An admin.db written before the idempotency buckets existed gets them
// when opened, and keyed writes work on it.
func TestIdempotencyBucketsAddedToAnOlderFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if name == BucketIdempotency || name == BucketIdempotencyOrder || name == BucketIdempotencySealed {
				continue
			}
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(BucketMeta)).Put([]byte("schema_version"), U64(1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for i := range 2 {
		ran, err := writeOnce(t, st, call(t, "tool", "k", map[string]any{}), now, secretOut{ID: "x"})
		if err != nil || ran != (i == 0) {
			t.Fatalf("run %d on the upgraded file: %v %v", i, ran, err)
		}
	}
}
