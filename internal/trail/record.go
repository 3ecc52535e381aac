// Package trail is the cryptographic core of cairn's decision trail: the
// JSON.stringify-exact serialization of chain records, their SHA-256 hashes
// and the verification of per-task hash chains (docs/decisions.md D11).
//
// It knows nothing of storage, MCP or gRPC so that the store, the audit tools
// and the offline verifier share one definition of "the hash of a record".
// The Merkle tree lives in trail/tree and the portable proof in trail/bundle.
// All three sit outside plugins/ because they are a file format, not an
// area: the core area writes records and the host's `cairn audit verify`
// and dashboard check and sign bundles without reaching into the area.
package trail

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// Chain names: every task has a thought chain (thought records) and an event
// chain (task_created / task_updated records).
const (
	ChainThought = "thought"
	ChainEvent   = "event"
)

// Event record types of the event chain; thought records use the thought
// types of the specification (reflection, decision, ...).
const (
	TypeTaskCreated = "task_created"
	TypeTaskUpdated = "task_updated"
)

// Fields are the hash inputs of one chain record, in the order the
// specification hashes them. PreviousHash "" stands for the first link and is
// serialized as null.
type Fields struct {
	TaskID       string `json:"task_id"`
	Type         string `json:"type"`
	Content      string `json:"content"`
	PreviousHash string `json:"previous_hash"`
	RecordedAt   string `json:"recorded_at"`
	RecordedBy   string `json:"recorded_by"`
}

// AppendCanonical appends the JSON.stringify serialization of the hash object
// {task_id, type, content, previous_hash, recorded_at, recorded_by} to dst.
// A field that is not valid UTF-8 is refused with a 400 ERR_INVALID_INPUT
// *errs.Error naming it.
func (f *Fields) AppendCanonical(dst []byte) ([]byte, error) {
	for _, c := range [...]struct{ name, v string }{
		{"task_id", f.TaskID}, {"type", f.Type}, {"content", f.Content},
		{"previous_hash", f.PreviousHash}, {"recorded_at", f.RecordedAt}, {"recorded_by", f.RecordedBy},
	} {
		if !utf8.ValidString(c.v) {
			return nil, notUTF8(c.name)
		}
	}
	dst = append(dst, `{"task_id":`...)
	dst = AppendString(dst, f.TaskID)
	dst = append(dst, `,"type":`...)
	dst = AppendString(dst, f.Type)
	dst = append(dst, `,"content":`...)
	dst = AppendString(dst, f.Content)
	dst = append(dst, `,"previous_hash":`...)
	if f.PreviousHash == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendString(dst, f.PreviousHash)
	}
	dst = append(dst, `,"recorded_at":`...)
	dst = AppendString(dst, f.RecordedAt)
	dst = append(dst, `,"recorded_by":`...)
	dst = AppendString(dst, f.RecordedBy)
	return append(dst, '}'), nil
}

// Canonical returns the JSON.stringify serialization of the hash object.
func (f *Fields) Canonical() ([]byte, error) {
	return f.AppendCanonical(make([]byte, 0, 160+len(f.Content)))
}

// Sum returns the raw SHA-256 digest of the record, the Merkle leaf of D12.
func (f *Fields) Sum() ([32]byte, error) {
	b, err := f.Canonical()
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// HashRecord returns the record hash of the specification: lowercase hex
// SHA-256 of the canonical serialization.
func HashRecord(f Fields) (string, error) {
	s, err := f.Sum()
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(s[:]), nil
}

// hasher hashes many records with one reused buffer, which matters when an
// audit walks a million of them.
type hasher struct{ buf []byte }

func (h *hasher) hash(f *Fields) (string, error) {
	var err error
	h.buf, err = f.AppendCanonical(h.buf[:0])
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(h.buf)
	return hex.EncodeToString(s[:]), nil
}
