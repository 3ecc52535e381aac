package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A write made under an idempotency key records the key and its outcome in
// the state document, in the same atomic replace as the change. A later
// call with the same key gets the recorded outcome and writes nothing, so a
// call replayed after a crash (the relay resends what was in flight) is
// applied once.
const (
	// MaxIdempotencyRecords bounds the recorded keys; the oldest go first.
	MaxIdempotencyRecords = 1000
	// maxIdempotencyBytes bounds the recorded outcomes together, so the
	// records cannot dominate the state file.
	maxIdempotencyBytes = 1 << 20
	// IdempotencyWindow is how long a key's outcome is kept: a relay
	// replays within seconds and a client retries within minutes
	// (docs/architecture.md). Older records go at the next keyed write.
	IdempotencyWindow = 24 * time.Hour
)

// Call is what a tool method knows besides its input.
type Call struct {
	// Key is the call's idempotency key; empty for none. The writing
	// actions of PlanTool, StateTool, LeaseTool, AgentTool and SkillTool
	// honour it.
	Key string
	// Tool names the calling tool; it is recorded as the sourceTool of
	// queued spawn flows.
	Tool string
}

// callRecord is one recorded keyed write.
type callRecord struct {
	// Key is the SHA-256 of the idempotency key (keys have no length
	// bound of their own; the record does).
	Key string `json:"key"`
	// Call is the SHA-256 of the operation and its input: the same key
	// sent with a different call is a conflict, not a replay.
	Call   string          `json:"call"`
	Result json.RawMessage `json:"result"`
	At     string          `json:"at"`
}

// callKey identifies a keyed write; the zero value means "no key".
type callKey struct{ key, call string }

// keyFor builds the callKey of op with input under c.Key.
func keyFor(c Call, op string, input any) callKey {
	if c.Key == "" {
		return callKey{}
	}
	in, _ := json.Marshal(input)
	k := sha256.Sum256([]byte(c.Key))
	h := sha256.New()
	h.Write([]byte(op))
	h.Write([]byte{0})
	h.Write(in)
	return callKey{key: hex.EncodeToString(k[:]), call: hex.EncodeToString(h.Sum(nil))}
}

// errUnchanged, returned by a write function with its result, means there
// is nothing to persist: the result is returned and nothing is written or
// recorded (repeating a call that changed nothing changes nothing).
var errUnchanged = errors.New("unchanged")

// lookupCall returns the recorded result of k, or a 409 when the key was
// recorded for another call.
func lookupCall(s *state, k callKey) (json.RawMessage, bool, error) {
	if k.key == "" {
		return nil, false, nil
	}
	for i := len(s.Calls) - 1; i >= 0; i-- {
		if r := s.Calls[i]; r.Key == k.key {
			if r.Call != k.call {
				return nil, false, errs.Conflictf(errs.Conflict,
					"this idempotency key was already used for a different call; a replay must repeat the original call exactly").
					With("field", "idempotencyKey").With("constraint", "sameCall")
			}
			return r.Result, true, nil
		}
	}
	return nil, false, nil
}

// recordCall appends k with its result and trims the records to the
// newest MaxIdempotencyRecords within maxIdempotencyBytes.
func recordCall(s *state, k callKey, result any, now time.Time) error {
	raw, err := json.Marshal(result)
	if err != nil {
		return err
	}
	s.Calls = append(s.Calls, callRecord{Key: k.key, Call: k.call, Result: raw, At: iso(now)})
	oldest := iso(now.Add(-IdempotencyWindow))
	keep, size := 0, 0
	for i := len(s.Calls) - 1; i >= 0 && keep < MaxIdempotencyRecords; i-- {
		if size += len(s.Calls[i].Result); size > maxIdempotencyBytes && keep > 0 {
			break
		}
		// Timestamps share one fixed format (iso), so they order as text.
		if keep > 0 && s.Calls[i].At < oldest {
			break
		}
		keep++
	}
	if drop := len(s.Calls) - keep; drop > 0 {
		s.Calls = append([]callRecord(nil), s.Calls[drop:]...)
	}
	return nil
}

// recordedCall looks k up in the current state.
func (e *Engine) recordedCall(k callKey) (json.RawMessage, bool, error) {
	if k.key == "" {
		return nil, false, nil
	}
	var raw json.RawMessage
	var ok bool
	err := e.read(func(s *state, _ time.Time) error {
		var err error
		raw, ok, err = lookupCall(s, k)
		return err
	})
	return raw, ok, err
}

// writeKeyed runs fn as one atomic write recorded under k. When k was
// already recorded it returns the recorded result and writes nothing (and
// publishes nothing). Replayed is true in that case.
func writeKeyed[T any](e *Engine, k callKey, fn func(s *state, now time.Time, emit func(string, any)) (T, error)) (out T, replayed bool, err error) {
	var recorded json.RawMessage
	err = e.commit(k, &recorded, func(s *state, now time.Time, emit func(string, any)) (any, error) {
		v, err := fn(s, now, emit)
		out = v
		return v, err
	})
	if err != nil || recorded == nil {
		return out, false, err
	}
	var zero T
	out = zero
	if err := json.Unmarshal(recorded, &out); err != nil {
		return out, true, errs.Newf(500, errs.Internal, "cannot decode a recorded outcome: %v", err)
	}
	return out, true, nil
}
