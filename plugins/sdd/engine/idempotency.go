package engine

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// A write made under an idempotency key records the key and its outcome in
// the state document, in the same atomic replace as the change. A later
// call with the same key gets the recorded outcome and writes nothing, so a
// call replayed after a crash (the relay resends what was in flight) is
// applied once; the same key with another call is a 409. The lookup, the
// comparison and the 409 are the SDK's (package idempotency,
// docs/decisions.md D42); the records live here.
//
// Records are kept by time only, whatever the write rate: each until its
// key's hold has passed (24 hours for a client's own key, ten minutes for
// one the host derived for its replays). They are bounded in bytes: a
// keyed write that would take them past maxIdempotencyBytes is refused
// with a 503 to retry in a few minutes, never by forgetting a key that is
// still held.
const maxIdempotencyBytes = 16 << 20

// Call is what a tool method knows besides its input.
type Call struct {
	// Idem is the call's idempotency (sdk.IdempotencyOf); the zero Key for
	// none. The writing actions of PlanTool, StateTool, LeaseTool,
	// AgentTool and SkillTool honour it.
	Idem idempotency.Key
	// Tool names the calling tool; it is recorded as the sourceTool of
	// queued spawn flows.
	Tool string
	// Tasks is the caller's task board: sdd_plan makes plan items tasks
	// on it and sdd_lease checks task ids against it. Nil when none is
	// reachable: task ids are then taken on trust.
	Tasks TaskBoard
	// Actor is the caller's identity (sdk.CallerFrom): the phase gates
	// record who asked for a move and who decided it.
	Actor string
}

// callRecord is one recorded keyed write.
type callRecord struct {
	// Key is the key's ID (idempotency.Key.ID), in hex.
	Key string `json:"key"`
	// Call is the call's fingerprint (idempotency.Key.Fingerprint), in
	// hex: the same key sent with a different call is a conflict, not a
	// replay.
	Call   string          `json:"call"`
	Result json.RawMessage `json:"result"`
	At     string          `json:"at"`
	// Until is when the record's hold ends (iso); empty in a record of an
	// older cairn, which kept every record 24 hours.
	Until string `json:"until,omitempty"`
}

// keyFor is the key of c's call. A call through the SDK names its tool and
// arguments; a library caller's key names op and input instead.
func keyFor(c Call, op string, input any) idempotency.Key {
	k := c.Idem
	if !k.Keyed() || k.Tool() != "" {
		return k
	}
	in, _ := json.Marshal(input)
	return k.For(op, in)
}

// errUnchanged, returned by a write function with its result, means there
// is nothing to persist: the result is returned and nothing is written or
// recorded (repeating a call that changed nothing changes nothing).
var errUnchanged = errors.New("unchanged")

// records is the state's idempotency.Store at now.
type records struct {
	s   *state
	now time.Time
}

func (r records) LoadOutcome(k idempotency.Key) (fingerprint, outcome []byte, found bool, err error) {
	id := hex.EncodeToString(k.ID())
	for i := len(r.s.Calls) - 1; i >= 0; i-- {
		c := r.s.Calls[i]
		if c.Key != id || c.until() < iso(r.now) {
			continue
		}
		if fingerprint, err = hex.DecodeString(c.Call); err != nil {
			return nil, nil, false, errs.Newf(500, errs.Internal, "a recorded call has a damaged fingerprint")
		}
		return fingerprint, c.Result, true, nil
	}
	return nil, nil, false, nil
}

func (r records) SaveOutcome(k idempotency.Key, fingerprint, outcome []byte) error {
	now := iso(r.now)
	keep := r.s.Calls[:0:0]
	size := len(outcome)
	for _, c := range r.s.Calls {
		if c.until() >= now {
			keep = append(keep, c)
			size += len(c.Result)
		}
	}
	if size > maxIdempotencyBytes {
		e := errs.Newf(503, errs.Unavailable, "the SDD state holds %d MiB of recent keyed writes' outcomes, its limit: retry this call in a few minutes, when the oldest are past their hold", maxIdempotencyBytes>>20)
		e.Details["applied"] = false
		e.Details["retryable"] = true
		return e
	}
	r.s.Calls = append(keep, callRecord{Key: hex.EncodeToString(k.ID()), Call: hex.EncodeToString(fingerprint), Result: outcome, At: now, Until: iso(r.now.Add(k.Hold()))})
	return nil
}

// until is when c's hold ends.
func (c callRecord) until() string {
	if c.Until != "" {
		return c.Until
	}
	at, err := time.Parse(time.RFC3339, c.At)
	if err != nil {
		return ""
	}
	return iso(at.Add(idempotency.ClientHold))
}

// lookupCall returns the recorded result of k in s at now, or a 409 when
// the key was recorded for another call.
func lookupCall(s *state, k idempotency.Key, now time.Time) (json.RawMessage, bool, error) {
	return idempotency.Lookup(k, records{s, now})
}

// recordCall records k with its result in s at now, dropping the records
// whose hold has ended.
func recordCall(s *state, k idempotency.Key, result any, now time.Time) error {
	raw, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return idempotency.Save(k, records{s, now}, raw)
}

// recordedCall looks k up in the current state.
func (e *Engine) recordedCall(k idempotency.Key) (json.RawMessage, bool, error) {
	if !k.Keyed() {
		return nil, false, nil
	}
	var raw json.RawMessage
	var ok bool
	err := e.read(func(s *state, now time.Time) error {
		var err error
		raw, ok, err = lookupCall(s, k, now)
		return err
	})
	return raw, ok, err
}

// writeKeyed runs fn as one atomic write recorded under k. When k was
// already recorded it returns the recorded result and writes nothing (and
// publishes nothing). Replayed is true in that case.
func writeKeyed[T any](e *Engine, k idempotency.Key, fn func(s *state, now time.Time, emit func(string, any)) (T, error)) (out T, replayed bool, err error) {
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
