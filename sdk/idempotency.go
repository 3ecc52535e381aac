package sdk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// OutcomeStore is what a plugin's store offers, inside the transaction of
// a write, to honour idempotency keys with Once: the outcome recorded under
// a key, and a way to record one. Records should be kept long enough to
// cover any retry (cairn's own areas keep them 24 hours).
type OutcomeStore interface {
	// LoadOutcome returns the call digest and output recorded under key.
	LoadOutcome(key string) (call string, output []byte, found bool, err error)
	// SaveOutcome records output under key, in the same transaction as
	// the write it describes.
	SaveOutcome(key, call string, output []byte) error
}

// Once runs write at most once per idempotency key of the call in ctx
// (IdempotencyOf), inside one transaction of the plugin's store, so a call
// replayed after a crash or retried by a client takes effect once
// (docs/decisions.md D32):
//
//	err := db.Update(func(tx *Tx) error {
//		out, _, err = sdk.Once(ctx, tx, func() (Out, error) { ... write with tx ... })
//		return err
//	})
//
// A key already recorded returns its output and writes nothing (replayed is
// true); recorded for another call, it is a 409 ERR_CONFLICT. A failed
// write records nothing. Without a key, write simply runs. Declare
// HonoursIdempotency on the tool.
func Once[T any](ctx context.Context, store OutcomeStore, write func() (T, error)) (out T, replayed bool, err error) {
	idem := IdempotencyOf(ctx)
	if idem.Key == "" {
		out, err = write()
		return out, false, err
	}
	call, raw, found, err := store.LoadOutcome(idem.Key)
	if err != nil {
		return out, false, err
	}
	if found {
		if call != idem.Call {
			return out, false, errs.Conflictf(errs.Conflict,
				"this idempotency key was already used for a different call; a retry must repeat the original call exactly").
				With("field", "idempotencyKey").With("constraint", "sameCall")
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, false, fmt.Errorf("sdk: the recorded outcome under an idempotency key is corrupt: %w", err)
		}
		return out, true, nil
	}
	if out, err = write(); err != nil {
		return out, false, err
	}
	raw, err = MarshalJSON(out)
	if err != nil {
		return out, false, err
	}
	return out, false, store.SaveOutcome(idem.Key, idem.Call, raw)
}

// CallDigest identifies a call by its tool and arguments (hex SHA-256).
func CallDigest(tool string, args []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(args)
	return hex.EncodeToString(h.Sum(nil))
}
