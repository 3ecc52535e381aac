package sdk

import (
	"context"
	"errors"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// mapOutcomes is an OutcomeStore over a map, as a test's "transaction".
type mapOutcomes map[string][2]string

func (m mapOutcomes) LoadOutcome(key string) (string, []byte, bool, error) {
	v, ok := m[key]
	return v[0], []byte(v[1]), ok, nil
}

func (m mapOutcomes) SaveOutcome(key, call string, output []byte) error {
	m[key] = [2]string{call, string(output)}
	return nil
}

func TestOnceAppliesAKeyedWriteOnce(t *testing.T) {
	store := mapOutcomes{}
	writes := 0
	write := func() (map[string]int, error) { writes++; return map[string]int{"n": writes}, nil }
	keyed := func(key, call string) context.Context {
		return WithIdempotency(context.Background(), Idempotency{Key: key, Call: call})
	}
	call := CallDigest("count", []byte(`{"by":1}`))

	out, replayed, err := Once(keyed("k1", call), store, write)
	if err != nil || replayed || out["n"] != 1 {
		t.Fatalf("first: %v %v %v", out, replayed, err)
	}
	out, replayed, err = Once(keyed("k1", call), store, write)
	if err != nil || !replayed || out["n"] != 1 || writes != 1 {
		t.Fatalf("repeat: %v replayed=%v %v; %d writes, want the first outcome and 1 write", out, replayed, err, writes)
	}
	_, _, err = Once(keyed("k1", CallDigest("count", []byte(`{"by":2}`))), store, write)
	var e *errs.Error
	if !errors.As(err, &e) || e.Status != 409 || e.Details["constraint"] != "sameCall" || writes != 1 {
		t.Fatalf("same key, another call: %v (%d writes); want 409 sameCall and no write", err, writes)
	}
	if _, _, err := Once(context.Background(), store, write); err != nil || writes != 2 {
		t.Fatalf("no key: %v, %d writes; want the write to run", err, writes)
	}
	failing := func() (map[string]int, error) { return nil, errors.New("disk full") }
	if _, _, err := Once(keyed("k2", call), store, failing); err == nil {
		t.Fatal("a failed write reported success")
	}
	if _, ok := store["k2"]; ok {
		t.Fatal("a failed write recorded its key; a retry could never succeed")
	}
}
