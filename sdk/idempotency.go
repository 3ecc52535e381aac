package sdk

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// OutcomeStore is what a plugin's store offers, inside the transaction of
// a write, to honour idempotency keys with Once: the outcome recorded for a
// key, and a way to record one that is kept at least the key's Hold (24
// hours for a client's own key).
type OutcomeStore = idempotency.Store

// Once runs write at most once per idempotency key of the call in ctx
// (IdempotencyOf), inside one transaction of the plugin's store, so a call
// replayed after a crash or retried by a client takes effect once
// (docs/decisions.md D42):
//
//	err := db.Update(func(tx *Tx) error {
//		out, _, err = sdk.Once(ctx, tx, func() (Out, error) { ... write with tx ... })
//		return err
//	})
//
// A key that named this call returns its output and writes nothing
// (replayed is true); one that named another call (another tool or other
// arguments) is a 409 ERR_CONFLICT. A failed write records nothing. Without
// a key, write simply runs. Declare HonoursIdempotency on the tool.
func Once[T any](ctx context.Context, store OutcomeStore, write func() (T, error)) (out T, replayed bool, err error) {
	return idempotency.Once(IdempotencyOf(ctx), store, func(v T) ([]byte, error) { return MarshalJSON(v) }, func(raw []byte, v *T) error { return json.Unmarshal(raw, v) }, write)
}
