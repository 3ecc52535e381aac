package idempotency_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// memStore is an area's store in miniature: records filed under Key.ID.
// A real store writes them in the transaction of the write.
type memStore map[string]record

type record struct{ fingerprint, outcome []byte }

func (m memStore) LoadOutcome(k idempotency.Key) ([]byte, []byte, bool, error) {
	r, ok := m[string(k.ID())]
	return r.fingerprint, r.outcome, ok, nil
}

func (m memStore) SaveOutcome(k idempotency.Key, fingerprint, outcome []byte) error {
	m[string(k.ID())] = record{fingerprint, outcome}
	return nil
}

// A Key names one call: the key the client sent, the tool and its
// arguments, scoped to the caller.
func ExampleKey() {
	k := idempotency.Key{Key: "create-42", Client: true}.
		For("task_create", []byte(`{"title":"write docs"}`)).
		By("user:ada")
	fmt.Println(k.Keyed(), k.Tool(), k.Hold())
	// Output: true task_create 24h0m0s
}

// For names the call; the same arguments in another encoding name the
// same call.
func ExampleKey_For() {
	k := idempotency.Key{Key: "k1"}
	a := k.For("task_create", []byte(`{"title":"a","due":"2025-01-31"}`))
	b := k.For("task_create", []byte(`{ "due" : "2025-01-31", "title" : "a" }`))
	c := k.For("task_update", []byte(`{"title":"a","due":"2025-01-31"}`))
	fmt.Println(bytes.Equal(a.Fingerprint(), b.Fingerprint()), bytes.Equal(a.Fingerprint(), c.Fingerprint()))
	// Output: true false
}

// By scopes a key to its caller: two callers sending the same key file
// two records.
func ExampleKey_By() {
	k := idempotency.Key{Key: "retry-1", Client: true}
	fmt.Println(bytes.Equal(k.By("user:ada").ID(), k.By("user:bob").ID()))
	fmt.Println(bytes.Equal(k.By("user:ada").ID(), k.By("user:ada").ID()))
	// Output:
	// false
	// true
}

// The zero Key carries no key: nothing is looked up or saved for it.
func ExampleKey_Keyed() {
	fmt.Println(idempotency.Key{}.Keyed(), idempotency.Key{Key: "k"}.Keyed())
	// Output: false true
}

func ExampleKey_Tool() {
	fmt.Printf("%q %q\n", idempotency.Key{Key: "k"}.Tool(), idempotency.Key{Key: "k"}.For("note_add", []byte(`{}`)).Tool())
	// Output: "" "note_add"
}

// A client's key is honoured for a day, one the host derived for its own
// replays for minutes.
func ExampleKey_Hold() {
	fmt.Println(idempotency.Key{Key: "k", Client: true}.Hold(), idempotency.Key{Key: "k"}.Hold())
	// Output: 24h0m0s 10m0s
}

// ID is the fixed-size name a store files the record under; it never
// contains the key itself.
func ExampleKey_ID() {
	id := idempotency.Key{Key: "a key of any length at all"}.By("user:ada").ID()
	fmt.Println(len(id), bytes.Contains(id, []byte("a key")))
	// Output: 32 false
}

func ExampleKey_Fingerprint() {
	k := idempotency.Key{Key: "k"}.For("task_create", []byte(`{"title":"a"}`))
	other := idempotency.Key{Key: "other"}.For("task_create", []byte(`{"title":"a"}`))
	fmt.Println(len(k.Fingerprint()), bytes.Equal(k.Fingerprint(), other.Fingerprint()))
	// Output: 32 false
}

// A store that keeps text saves the fingerprint in hex.
func ExampleKey_FingerprintHex() {
	k := idempotency.Key{Key: "k"}.For("task_create", []byte(`{"title":"a"}`))
	fmt.Println(len(k.FingerprintHex()), k.FingerprintHex() == fmt.Sprintf("%x", k.Fingerprint()))
	// Output: 64 true
}

// An area's store implements Store over its own tables.
func ExampleStore() {
	var s idempotency.Store = memStore{}
	k := idempotency.Key{Key: "k"}.For("note_add", []byte(`{"text":"hi"}`))
	_ = idempotency.Save(k, s, []byte(`{"id":"n-1"}`))
	out, found, _ := idempotency.Lookup(k, s)
	fmt.Println(found, string(out))
	// Output: true {"id":"n-1"}
}

// Once is what a write tool calls: the first call writes, a repeat
// answers the recorded outcome, the same key on another call is a 409.
func ExampleOnce() {
	s := memStore{}
	writes := 0
	create := func(args string) (string, bool, error) {
		k := idempotency.Key{Key: "create-1", Client: true}.For("task_create", []byte(args)).By("user:ada")
		return idempotency.Once(k, s, func(id string) ([]byte, error) { return json.Marshal(id) },
			func(raw []byte, id *string) error { return json.Unmarshal(raw, id) },
			func() (string, error) {
				writes++
				return fmt.Sprintf("t-%d", writes), nil
			})
	}
	fmt.Println(create(`{"title":"a"}`))
	fmt.Println(create(`{"title":"a"}`))
	_, _, err := create(`{"title":"b"}`)
	e, _ := errs.As(err)
	fmt.Println(e.Status, e.Details["constraint"], writes)
	// Output:
	// t-1 false <nil>
	// t-1 true <nil>
	// 409 sameCall 1
}

// Lookup finds a recorded outcome; it refuses the key when it was
// recorded for another call.
func ExampleLookup() {
	s := memStore{}
	k := idempotency.Key{Key: "k"}.For("note_add", []byte(`{"text":"hi"}`))
	_, found, _ := idempotency.Lookup(k, s)
	fmt.Println(found)
	_ = idempotency.Save(k, s, []byte(`"n-1"`))
	out, found, _ := idempotency.Lookup(k, s)
	fmt.Println(found, string(out))
	_, _, err := idempotency.Lookup(k.For("note_add", []byte(`{"text":"bye"}`)), s)
	fmt.Println(err != nil)
	// Output:
	// false
	// true "n-1"
	// true
}

// Save records nothing for an unkeyed call.
func ExampleSave() {
	s := memStore{}
	_ = idempotency.Save(idempotency.Key{}.For("note_add", []byte(`{}`)), s, []byte(`"n-1"`))
	_ = idempotency.Save(idempotency.Key{Key: "k"}.For("note_add", []byte(`{}`)), s, []byte(`"n-2"`))
	fmt.Println(len(s))
	// Output: 1
}
