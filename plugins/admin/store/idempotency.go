package store

// Idempotency records (docs/decisions.md D42): a write made under an
// idempotency key records the key and its outcome in the same transaction
// as the write, so "written" and "recorded" commit together or not at all,
// and a repeat of the call answers the recorded outcome without a second
// effect. The lookup, the comparison of the call's fingerprint and the 409
// for a key sent with another call are the SDK's (package idempotency);
// this file keeps the records in the admin store. Only a successful call is
// recorded: a failed one leaves nothing, so the same key may be sent again
// once the cause is fixed.
//
// A record is filed under the key's SHA-256 and keeps the call's
// fingerprint (an HMAC under the key of the tool and its canonical
// arguments), so the store holds neither a client's key nor a plain digest
// of arguments that may carry a secret.
//
// Retention is by time only, whatever the write rate: a record is honoured
// until its key's hold has passed (24 hours for a client's own key, ten
// minutes for one the host derived) and the expired ones go, oldest first,
// a few with each keyed write and all at a sweep.
//
// Secrets. An outcome that carries a plaintext secret shown once (a new API
// key, an invitation token, a webhook signing secret) keeps the secret only
// for SecretWindow, sealed (AES-256-GCM) under a key derived from the
// idempotency key itself, which the store never holds: only a caller who
// presents the key can open it. Once the window has passed a replay answers
// the outcome without the secret and with a notice saying it was shown once
// and how to get a new one; the sealed copy is erased by the next keyed
// write or sweep (SweepIdempotency).

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// Idempotency buckets. They are part of the on-disk format.
const (
	// BucketIdempotency maps a record key (32 bytes) to its record.
	BucketIdempotency = "idempotency"
	// BucketIdempotencyOrder orders the records by the end of their hold:
	// unix ms and a sequence (8 bytes each) → record key.
	BucketIdempotencyOrder = "idempotency_order"
	// BucketIdempotencySealed lists the records that still hold a sealed
	// secret: unix ms (8 bytes), record key → empty.
	BucketIdempotencySealed = "idempotency_sealed"
)

const (
	// SecretWindow is how long a recorded outcome keeps its secret for a
	// replay to return; after it the secret is gone for good.
	SecretWindow = 10 * time.Minute
	// pruneBatch bounds the expired records one write removes, so no
	// write pays for a long backlog at once.
	pruneBatch = 16
)

var (
	counterIdemCount = []byte("idempotency_count")
	counterIdemSeq   = []byte("idempotency_seq")
)

// Call is one tool call's idempotency: which record it reads and writes,
// and how its outcome is recorded. The zero Call, and a nil *Call, carry no
// key: nothing is looked up or recorded.
type Call struct {
	key     idempotency.Key
	id      []byte // the key's SHA-256
	seal    []byte // AES key of the sealed secrets
	secrets []string
	notice  string
	present func(v any) any
	// replayed is the recorded outcome when a transaction found it.
	replayed json.RawMessage
}

// NewCall builds the Call of the keyed call k (the zero Key for none), as
// the SDK names it (sdk.IdempotencyOf).
func NewCall(k idempotency.Key) *Call {
	if !k.Keyed() {
		return &Call{}
	}
	mac := hmac.New(sha256.New, []byte(k.Key))
	mac.Write([]byte("cairn admin idempotency seal\x00" + k.Tool()))
	return &Call{key: k, id: k.ID(), seal: mac.Sum(nil)}
}

// Keyed reports whether the call carries a key.
func (c *Call) Keyed() bool { return c != nil && c.id != nil }

// Secrets names the fields of the outcome that hold a secret shown once
// (dot-separated paths into its JSON) and the notice that replaces them,
// as "secret_notice" beside each, once SecretWindow has passed.
func (c *Call) Secrets(notice string, paths ...string) *Call {
	if c != nil {
		c.notice, c.secrets = notice, paths
	}
	return c
}

// Present sets how a library result becomes the recorded outcome (the
// tool's output), when the two differ.
func Present[L, T any](c *Call, f func(L) T) {
	if c != nil {
		c.present = func(v any) any { return f(v.(L)) }
	}
}

// Replayed is the recorded outcome a transaction of this call found
// (nothing was written), or nil.
func (c *Call) Replayed() json.RawMessage {
	if c == nil {
		return nil
	}
	return c.replayed
}

// record is the stored form of one recorded call.
type record struct {
	Tool string `json:"tool"`
	// Fingerprint is the call's (idempotency.Key.Fingerprint), in hex.
	Fingerprint string          `json:"fp"`
	Output      json.RawMessage `json:"output"`
	Sealed      []byte          `json:"sealed,omitempty"`
	At          int64           `json:"at"`    // unix ms
	Until       int64           `json:"until"` // unix ms: the end of the hold
	Seq         uint64          `json:"seq"`
}

// outcomes is the admin store's idempotency.Store for one call inside one
// transaction: it reveals or seals the call's secrets.
type outcomes struct {
	tx  Tx
	c   *Call
	now time.Time
}

func (o outcomes) LoadOutcome(k idempotency.Key) (fingerprint, outcome []byte, found bool, err error) {
	var r record
	found, err = Get(o.tx, BucketIdempotency, o.c.id, &r)
	if err != nil || !found || o.now.UnixMilli() > r.Until {
		return nil, nil, false, err
	}
	if fingerprint, err = hex.DecodeString(r.Fingerprint); err != nil {
		return nil, nil, false, fmt.Errorf("store: a recorded %s call has a damaged fingerprint", r.Tool)
	}
	outcome, err = o.c.reveal(r, o.now)
	return fingerprint, outcome, err == nil, err
}

func (o outcomes) SaveOutcome(k idempotency.Key, fingerprint, outcome []byte) error {
	c, tx, now := o.c, o.tx, o.now
	r, err := c.seal1(outcome, now)
	if err != nil {
		return err
	}
	r.Fingerprint = hex.EncodeToString(fingerprint)
	r.Until = now.Add(k.Hold()).UnixMilli()
	count, _ := counter(tx, counterIdemCount)
	var old record
	if found, err := Get(tx, BucketIdempotency, c.id, &old); err != nil {
		return err
	} else if found {
		// An expired record used again: replace it and its index entries.
		if err := unindex(tx, c.id, old); err != nil {
			return err
		}
		count--
	}
	seq, err := NextSeq(tx, string(counterIdemSeq))
	if err != nil {
		return err
	}
	r.Seq = seq
	if err := Put(tx, BucketIdempotency, c.id, r); err != nil {
		return err
	}
	if err := tx.Bucket([]byte(BucketIdempotencyOrder)).Put(orderKey(r.Until, seq), c.id); err != nil {
		return err
	}
	if r.Sealed != nil {
		if err := tx.Bucket([]byte(BucketIdempotencySealed)).Put(Key(U64(uint64(r.At)), c.id), []byte{}); err != nil {
			return err
		}
	}
	count++
	if count, err = prune(tx, tx.Bucket([]byte(BucketIdempotency)), count, now); err != nil {
		return err
	}
	if err := setCounter(tx, counterIdemCount, count); err != nil {
		return err
	}
	_, err = unseal(tx, now, pruneBatch)
	return err
}

// Lookup returns the outcome recorded for c inside tx, if any and still
// held at now; a 409 when the key was recorded for another call.
func Lookup(tx Tx, c *Call, now time.Time) (json.RawMessage, bool, error) {
	if !c.Keyed() {
		return nil, false, nil
	}
	raw, found, err := idempotency.Lookup(c.key, outcomes{tx, c, now})
	return raw, found, err
}

// Lookup is Lookup in a read transaction of its own: the check a tool makes
// before anything else, so a repeat answers even when the first call
// changed what its checks would now find (a deleted project).
func (s *Store) Lookup(c *Call, now time.Time) (out json.RawMessage, found bool, err error) {
	if !c.Keyed() {
		return nil, false, nil
	}
	err = s.View(func(tx Tx) error {
		out, found, err = Lookup(tx, c, now)
		return err
	})
	return out, found, err
}

// Once is the pattern for a library write inside its transaction: when c
// was recorded it notes the recorded outcome on c (Replayed) and returns
// the zero L, writing nothing; otherwise it runs write and records its
// result. write's error records nothing.
func Once[L any](tx Tx, c *Call, now time.Time, write func() (L, error)) (L, error) {
	var zero L
	if raw, found, err := Lookup(tx, c, now); err != nil || found {
		if found {
			c.replayed = raw
		}
		return zero, err
	}
	out, err := write()
	if err != nil {
		return out, err
	}
	return out, Record(tx, c, out, now)
}

// Record stores the outcome v of c inside tx, the transaction of the write
// v describes, and prunes expired records. An empty outcome (nil, false,
// "": the library's answer for an unknown id, which the tool turns into a
// 404) records nothing.
func Record(tx Tx, c *Call, v any, now time.Time) error {
	if !c.Keyed() || isZero(v) {
		return nil
	}
	raw, err := c.presented(v)
	if err != nil {
		return err
	}
	return idempotency.Save(c.key, outcomes{tx, c, now}, raw)
}

// presented is the JSON of outcome v as the tool answers it.
func (c *Call) presented(v any) ([]byte, error) {
	if c.present != nil {
		v = c.present(v)
	}
	return json.Marshal(v)
}

// Amend replaces the recorded outcome of c with v (keeping its time): a
// call whose outcome is known only after its write committed (a webhook
// test's response, a triggered event's first attempts) records what it
// queued in the write's transaction and its final outcome here.
func Amend(tx Tx, c *Call, v any, now time.Time) error {
	if !c.Keyed() {
		return nil
	}
	var old record
	found, err := Get(tx, BucketIdempotency, c.id, &old)
	if err != nil || !found || old.Fingerprint != c.key.FingerprintHex() {
		return err
	}
	raw, err := c.presented(v)
	if err != nil {
		return err
	}
	r, err := c.seal1(raw, time.UnixMilli(old.At))
	if err != nil {
		return err
	}
	r.Fingerprint, r.Until, r.Seq = old.Fingerprint, old.Until, old.Seq
	if old.Sealed == nil {
		r.Sealed = nil // the window had passed; never seal again
	}
	return Put(tx, BucketIdempotency, c.id, r)
}

// SweepIdempotency erases the secrets whose window has passed and the
// records whose hold has ended, in a write transaction only when
// there is something to erase. It reports how many secrets it erased.
func (s *Store) SweepIdempotency(now time.Time) (int, error) {
	due := false
	if err := s.View(func(tx Tx) error {
		k, _ := tx.Bucket([]byte(BucketIdempotencySealed)).Cursor().First()
		due = len(k) >= 8 && now.Sub(time.UnixMilli(int64(binary.BigEndian.Uint64(k)))) > SecretWindow
		if !due {
			k, _ = tx.Bucket([]byte(BucketIdempotencyOrder)).Cursor().First()
			due = len(k) >= 8 && now.UnixMilli() > int64(binary.BigEndian.Uint64(k))
		}
		return nil
	}); err != nil || !due {
		return 0, err
	}
	n := 0
	err := s.Update(func(tx Tx) error {
		var err error
		if n, err = unseal(tx, now, 1<<20); err != nil {
			return err
		}
		count, _ := counter(tx, counterIdemCount)
		for {
			left, err := prune(tx, tx.Bucket([]byte(BucketIdempotency)), count, now)
			if err != nil {
				return err
			}
			if left == count {
				return setCounter(tx, counterIdemCount, count)
			}
			count = left
		}
	})
	return n, err
}

// IdempotencyCount reports how many calls are recorded.
func IdempotencyCount(tx Tx) uint64 {
	n, _ := counter(tx, counterIdemCount)
	return n
}

// prune removes up to pruneBatch of the records whose hold ended before
// now and returns the new count.
func prune(tx Tx, b Bucket, count uint64, now time.Time) (uint64, error) {
	c := tx.Bucket([]byte(BucketIdempotencyOrder)).Cursor()
	for range pruneBatch {
		k, id := c.First()
		if k == nil || len(k) != 16 {
			break
		}
		if until := int64(binary.BigEndian.Uint64(k)); until >= now.UnixMilli() {
			break
		}
		id = bytes.Clone(id)
		if err := c.Delete(); err != nil {
			return count, err
		}
		var r record
		found, err := Get(tx, BucketIdempotency, id, &r)
		if err != nil {
			return count, err
		}
		if !found || r.Seq != binary.BigEndian.Uint64(k[8:]) {
			continue // a stale entry of a record replaced since
		}
		if r.Sealed != nil {
			if err := tx.Bucket([]byte(BucketIdempotencySealed)).Delete(Key(U64(uint64(r.At)), id)); err != nil {
				return count, err
			}
		}
		if err := b.Delete(id); err != nil {
			return count, err
		}
		count--
	}
	return count, nil
}

// unseal erases the sealed secrets of up to max records older than
// SecretWindow and reports how many it erased.
func unseal(tx Tx, now time.Time, max int) (int, error) {
	c := tx.Bucket([]byte(BucketIdempotencySealed)).Cursor()
	n := 0
	for ; n < max; n++ {
		k, _ := c.First()
		if len(k) < 9 || now.Sub(time.UnixMilli(int64(binary.BigEndian.Uint64(k)))) <= SecretWindow {
			break
		}
		id := bytes.Clone(k[9:])
		if err := c.Delete(); err != nil {
			return n, err
		}
		var r record
		found, err := Get(tx, BucketIdempotency, id, &r)
		if err != nil {
			return n, err
		}
		if found && r.Sealed != nil {
			r.Sealed = nil
			if err := Put(tx, BucketIdempotency, id, r); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// unindex removes a replaced record's order and sealed entries.
func unindex(tx Tx, id []byte, r record) error {
	if err := tx.Bucket([]byte(BucketIdempotencyOrder)).Delete(orderKey(r.Until, r.Seq)); err != nil {
		return err
	}
	if r.Sealed == nil {
		return nil
	}
	return tx.Bucket([]byte(BucketIdempotencySealed)).Delete(Key(U64(uint64(r.At)), id))
}

// orderKey is unix ms then sequence, 8 bytes each, so keys sort by time.
func orderKey(at int64, seq uint64) []byte { return append(U64(uint64(at)), U64(seq)...) }

// seal1 builds the record of outcome raw (JSON) at time at: its JSON
// without the secrets, and the secrets sealed.
func (c *Call) seal1(raw []byte, at time.Time) (record, error) {
	r := record{Tool: c.key.Tool(), Output: raw, At: at.UnixMilli()}
	if len(c.secrets) == 0 {
		return r, nil
	}
	doc, err := decode(raw)
	if err != nil {
		return record{}, err
	}
	found := map[string]any{}
	for _, p := range c.secrets {
		if parent, leaf := walk(doc, p); parent != nil {
			if s, ok := parent[leaf]; ok && s != "" && s != nil {
				found[p] = s
				delete(parent, leaf)
			}
		}
	}
	if len(found) == 0 {
		return r, nil
	}
	if r.Output, err = json.Marshal(doc); err != nil {
		return record{}, err
	}
	plain, err := json.Marshal(found)
	if err != nil {
		return record{}, err
	}
	gcm, err := c.aead()
	if err != nil {
		return record{}, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return record{}, err
	}
	r.Sealed = gcm.Seal(nonce, nonce, plain, c.id)
	return r, nil
}

// reveal is the outcome of r for a replay at now: with its secrets inside
// SecretWindow, with a notice in their place after it.
func (c *Call) reveal(r record, now time.Time) (json.RawMessage, error) {
	if len(c.secrets) == 0 {
		return r.Output, nil
	}
	doc, err := decode(r.Output)
	if err != nil {
		return nil, err
	}
	found := map[string]any{}
	if r.Sealed != nil && now.Sub(time.UnixMilli(r.At)) <= SecretWindow {
		gcm, err := c.aead()
		if err != nil {
			return nil, err
		}
		n := gcm.NonceSize()
		if len(r.Sealed) < n {
			return nil, fmt.Errorf("store: the sealed secret of a recorded %s call is damaged", c.key.Tool())
		}
		plain, err := gcm.Open(nil, r.Sealed[:n], r.Sealed[n:], c.id)
		if err != nil {
			return nil, fmt.Errorf("store: the sealed secret of a recorded %s call does not open", c.key.Tool())
		}
		if err := json.Unmarshal(plain, &found); err != nil {
			return nil, err
		}
	}
	changed := false
	for _, p := range c.secrets {
		parent, leaf := walk(doc, p)
		if parent == nil {
			continue
		}
		if s, ok := found[p]; ok {
			parent[leaf] = s
		} else {
			parent["secret_notice"] = c.notice
		}
		changed = true
	}
	if !changed {
		return r.Output, nil
	}
	return json.Marshal(doc)
}

func (c *Call) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(c.seal)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// decode reads a JSON object keeping numbers exact.
func decode(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("store: a recorded outcome is not a JSON object: %w", err)
	}
	return doc, nil
}

// walk finds the object holding the last element of a dot-separated path,
// or nil when the path does not lead to one.
func walk(doc map[string]any, path string) (map[string]any, string) {
	parts := strings.Split(path, ".")
	cur := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, ""
		}
		cur = next
	}
	return cur, parts[len(parts)-1]
}

// isZero reports an outcome that records nothing: nil, a zero value, or
// one whose Empty method says the call did nothing (an unknown id).
func isZero(v any) bool {
	if v == nil {
		return true
	}
	if e, ok := v.(interface{ Empty() bool }); ok && e.Empty() {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.IsZero()
}

func counter(tx Tx, name []byte) (uint64, bool) {
	v := tx.Bucket([]byte(BucketCounters)).Get(name)
	if len(v) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), true
}

func setCounter(tx Tx, name []byte, n uint64) error {
	return tx.Bucket([]byte(BucketCounters)).Put(name, U64(n))
}
