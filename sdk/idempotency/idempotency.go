// Package idempotency is the one way a write tool of any area honours an
// idempotency key (docs/decisions.md D42): a key names one call — its tool
// and its canonical arguments — so a repeat of that call answers the first
// outcome without a second effect, and the same key sent with another call
// is a 409 that names the key. Each area stores the records in its own store,
// inside the transaction of the write (Store); the lookup, the comparison
// and the conflict live here only.
//
// It has no dependency on MCP or gRPC, so an area's domain package can use
// it; plugins reach it through sdk.Once and sdk.IdempotencyOf.
package idempotency

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// How long a store must honour a key.
const (
	// ClientHold is how long a client's own key (HTTP Idempotency-Key,
	// _meta["io.cairn/idempotencyKey"]) is honoured, whatever the write
	// rate.
	ClientHold = 24 * time.Hour
	// DerivedHold is how long a key the host derived for its own replays
	// (the relay's session key and request id, or one minted per request)
	// is honoured. The host replays a call only while it is in flight,
	// within its resume window (a minute at most), so ten minutes after the
	// write is a wide margin past the delivery of its answer.
	DerivedHold = 10 * time.Minute
)

// Key is the idempotency of one call. The zero Key carries none: nothing
// is looked up or recorded.
type Key struct {
	// Key is the key itself, as the host scoped it (a client's key carries
	// its principal); empty for none.
	Key string
	// Client is true for a client's own key, false for one the host
	// derived.
	Client bool
	// Replay is true when the call may already have run once.
	Replay bool

	principal string
	tool      string
	args      []byte
	// call is a fingerprint set directly (For); empty: computed from tool
	// and args.
	call []byte
}

// For returns k naming the call of tool with args (a JSON object).
func (k Key) For(tool string, args []byte) Key {
	k.tool, k.args, k.call = tool, args, nil
	return k
}

// By returns k scoped to principal: the same key sent by two callers names
// two records, so no caller ever gets another's outcome
// (docs/decisions.md D35).
func (k Key) By(principal string) Key {
	k.principal = principal
	return k
}

// Keyed reports whether k carries a key.
func (k Key) Keyed() bool { return k.Key != "" }

// Tool is the tool k's call names ("" when For was not called).
func (k Key) Tool() string { return k.tool }

// Hold is how long a store must honour k.
func (k Key) Hold() time.Duration {
	if k.Client {
		return ClientHold
	}
	return DerivedHold
}

// ID is what a store files k's record under: the SHA-256 of the caller
// and the key, so a record's size does not grow with the key's and the
// store never holds a client's key itself.
func (k Key) ID() []byte {
	h := sha256.Sum256([]byte("cairn idempotency key\x00" + k.principal + "\x00" + k.Key))
	return h[:]
}

// Fingerprint identifies k's call: HMAC-SHA-256 under the key of the tool
// and its canonical arguments (canonicalJSON), so the same call sent by another
// serializer matches, and the store keeps no plain digest of arguments that
// may hold a secret.
func (k Key) Fingerprint() []byte {
	if k.call != nil {
		return k.call
	}
	args, err := canonicalJSON(k.args)
	if err != nil {
		// Arguments reach a handler only once they parsed as JSON; these
		// did not, so compare them as they are.
		args = k.args
	}
	m := hmac.New(sha256.New, []byte(k.Key))
	m.Write([]byte(k.tool))
	m.Write([]byte{0})
	m.Write(args)
	return m.Sum(nil)
}

// Store keeps the records of one area, inside the transaction of the write
// they describe, for at least k.Hold() after they are saved.
type Store interface {
	// LoadOutcome returns the fingerprint and the outcome recorded for k,
	// if any is still held.
	LoadOutcome(k Key) (fingerprint, outcome []byte, found bool, err error)
	// SaveOutcome records outcome for k with its fingerprint, in the
	// transaction of the write.
	SaveOutcome(k Key, fingerprint, outcome []byte) error
}

// Lookup returns the outcome recorded for k in s: found is true when k
// already named this call. The same key recorded for another call is a 409
// ERR_CONFLICT (field idempotencyKey, constraint sameCall). An unkeyed k
// finds nothing.
func Lookup(k Key, s Store) (outcome []byte, found bool, err error) {
	if !k.Keyed() {
		return nil, false, nil
	}
	fp, outcome, found, err := s.LoadOutcome(k)
	if err != nil || !found {
		return nil, false, err
	}
	if !bytes.Equal(fp, k.Fingerprint()) {
		return nil, false, conflict(k)
	}
	return outcome, true, nil
}

// Save records outcome for k in s (nothing for an unkeyed k).
func Save(k Key, s Store, outcome []byte) error {
	if !k.Keyed() {
		return nil
	}
	return s.SaveOutcome(k, k.Fingerprint(), outcome)
}

// Once runs write at most once for k's call inside one transaction of the
// store s: when k already named this call, it returns the recorded outcome
// decoded into T and replayed = true, writing nothing; named another call,
// a 409; otherwise it runs write and records its output, encoded by
// encode (JSON for the SDK's tools), in the same transaction. write's error
// records nothing, so the same key may be sent again once its cause is
// fixed.
func Once[T any](k Key, s Store, encode func(T) ([]byte, error), decode func([]byte, *T) error, write func() (T, error)) (out T, replayed bool, err error) {
	raw, found, err := Lookup(k, s)
	if err != nil {
		return out, false, err
	}
	if found {
		if err := decode(raw, &out); err != nil {
			return out, false, errs.Newf(500, errs.Internal, "the outcome recorded under an idempotency key is corrupt: %v", err)
		}
		return out, true, nil
	}
	if out, err = write(); err != nil || !k.Keyed() {
		return out, false, err
	}
	if raw, err = encode(out); err != nil {
		return out, false, err
	}
	return out, false, Save(k, s, raw)
}

// conflict is the error for k sent with a call other than the one it
// names. The host rewrites its message to name the key as the client sent
// it (a header, a _meta field or a request id).
func conflict(k Key) *errs.Error {
	return errs.Conflictf(errs.Conflict,
		"this idempotency key was already used for another call (another tool or other arguments) within the last %s; a retry must repeat that call exactly, and a new call needs a new key",
		k.Hold()).
		With("field", "idempotencyKey").With("constraint", "sameCall")
}

// FingerprintHex is Fingerprint in hex, for stores that keep text.
func (k Key) FingerprintHex() string { return hex.EncodeToString(k.Fingerprint()) }
