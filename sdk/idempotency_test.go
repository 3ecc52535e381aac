package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// mapOutcomes is an OutcomeStore over a map, as a test's "transaction".
type mapOutcomes map[string][2][]byte

func (m mapOutcomes) LoadOutcome(k Idempotency) ([]byte, []byte, bool, error) {
	v, ok := m[string(k.ID())]
	return v[0], v[1], ok, nil
}

func (m mapOutcomes) SaveOutcome(k Idempotency, fingerprint, output []byte) error {
	m[string(k.ID())] = [2][]byte{fingerprint, output}
	return nil
}

func TestOnceAppliesAKeyedWriteOnce(t *testing.T) {
	store := mapOutcomes{}
	writes := 0
	write := func() (map[string]int, error) { writes++; return map[string]int{"n": writes}, nil }
	keyed := func(key, args string) context.Context {
		return WithIdempotency(context.Background(), Idempotency{Key: key}.For("count", []byte(args)))
	}

	out, replayed, err := Once(keyed("k1", `{"by":1,"of":"a"}`), store, write)
	if err != nil || replayed || out["n"] != 1 {
		t.Fatalf("first: %v %v %v", out, replayed, err)
	}
	// The same call, encoded by another serializer, is a repeat.
	out, replayed, err = Once(keyed("k1", "{ \"of\" : \"a\", \"by\" : 1.0 }"), store, write)
	if err != nil || !replayed || out["n"] != 1 || writes != 1 {
		t.Fatalf("repeat: %v replayed=%v %v; %d writes, want the first outcome and 1 write", out, replayed, err, writes)
	}
	_, _, err = Once(keyed("k1", `{"by":2,"of":"a"}`), store, write)
	var e *errs.Error
	if !errors.As(err, &e) || e.Status != 409 || e.Details["constraint"] != "sameCall" || writes != 1 {
		t.Fatalf("same key, another call: %v (%d writes); want 409 sameCall and no write", err, writes)
	}
	other := WithIdempotency(context.Background(), Idempotency{Key: "k1"}.For("other", []byte(`{"by":1,"of":"a"}`)))
	if _, _, err := Once(other, store, write); !errors.As(err, &e) || e.Status != 409 || writes != 1 {
		t.Fatalf("same key, same arguments, another tool: %v (%d writes); want 409 and no write", err, writes)
	}
	if _, _, err := Once(context.Background(), store, write); err != nil || writes != 2 {
		t.Fatalf("no key: %v, %d writes; want the write to run", err, writes)
	}
	failing := func() (map[string]int, error) { return nil, errors.New("disk full") }
	if _, _, err := Once(keyed("k2", `{}`), store, failing); err == nil {
		t.Fatal("a failed write reported success")
	}
	if len(store) != 1 {
		t.Fatal("a failed write recorded its key; a retry could never succeed")
	}
}

// The SDK names the call before the handler runs: a tool's handler that
// uses Once sees the fingerprint of its own tool and arguments.
func TestInvokeNamesTheCallOfTheKey(t *testing.T) {
	store := mapOutcomes{}
	writes := 0
	p := New("p", "1.0.0")
	type in struct {
		N int `json:"n"`
	}
	type out struct {
		Writes int `json:"writes"`
	}
	AddTool(p, Tool[in, out]{Name: "p_write", Description: "writes", HonoursIdempotency: true,
		Handler: func(ctx context.Context, _ in) (out, error) {
			o, _, err := Once(ctx, store, func() (out, error) { writes++; return out{writes}, nil })
			return o, err
		}})
	ctx := WithIdempotency(context.Background(), Idempotency{Key: "relay:7"})
	first := p.invoke(ctx, "p_write", []byte(`{"n":1}`))
	again := p.invoke(ctx, "p_write", []byte(`{ "n": 1 }`))
	if first.Err != nil || again.Err != nil || string(first.Output) != string(again.Output) || writes != 1 {
		t.Fatalf("repeat: %s / %s (%v %v), %d writes; want one write and the first outcome", first.Output, again.Output, first.Err, again.Err, writes)
	}
	conflict := p.invoke(ctx, "p_write", []byte(`{"n":2}`))
	if conflict.Err == nil || conflict.Status != 409 || writes != 1 {
		t.Fatalf("another call under the key: %s %+v, %d writes; want 409 and no write", conflict.Output, conflict.Err, writes)
	}
	var o out
	if err := json.Unmarshal(first.Output, &o); err != nil || o.Writes != 1 {
		t.Fatalf("output %s", first.Output)
	}
}
