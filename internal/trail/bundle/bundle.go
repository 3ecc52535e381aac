// Package bundle builds and verifies cairn's portable proof of an audit
// session (docs/decisions.md D13): the session's records with their hash inputs, the
// Merkle leaves and root, one inclusion proof per record, and a checkpoint
// signed with the host's ed25519 key in the C2SP signed-note format.
//
// Verification needs nothing but the bundle and the verifier key, so that a
// third party can check an agent's decision trail without cairn's store.
package bundle

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/tree"
)

// Format identifies the bundle layout; it changes when the layout does.
const Format = "cairn-proof-bundle/v1"

// Session is the metadata of the audit session the bundle proves.
type Session struct {
	SessionID   string   `json:"session_id"`
	TaskID      string   `json:"task_id"`
	TaskIDs     []string `json:"task_ids"`
	AuditorID   string   `json:"auditor_id,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Scope       string   `json:"scope"`
	StartedAt   string   `json:"started_at,omitempty"`
	FinalizedAt string   `json:"finalized_at"`
}

// Record is one chain record: where it sits, its hash inputs and its stored
// hashes. PreviousHash is null for the first link of a chain.
type Record struct {
	ID           string  `json:"id"`
	Chain        string  `json:"chain"`
	TaskID       string  `json:"task_id"`
	Position     int     `json:"position"`
	Type         string  `json:"type"`
	Content      string  `json:"content"`
	PreviousHash *string `json:"previous_hash"`
	RecordedAt   string  `json:"recorded_at"`
	RecordedBy   string  `json:"recorded_by"`
	Hash         string  `json:"hash"`
	// TraceID is the W3C trace id of the call that wrote the record, when
	// it was traced. It is not a hash input, and no signature covers it: a
	// pointer into the operator's traces, not part of the proof
	// (docs/decisions.md D38).
	TraceID string `json:"trace_id,omitempty"`
}

// NewRecord builds a Record from a stored record's id, chain, 1-indexed
// position, hash inputs and stored hash.
func NewRecord(id, chain string, position int, f trail.Fields, hash string) Record {
	r := Record{
		ID: id, Chain: chain, TaskID: f.TaskID, Position: position, Type: f.Type,
		Content: f.Content, RecordedAt: f.RecordedAt, RecordedBy: f.RecordedBy, Hash: hash,
	}
	if f.PreviousHash != "" {
		p := f.PreviousHash
		r.PreviousHash = &p
	}
	return r
}

// Fields returns the record's hash inputs.
func (r *Record) Fields() trail.Fields {
	f := trail.Fields{
		TaskID: r.TaskID, Type: r.Type, Content: r.Content,
		RecordedAt: r.RecordedAt, RecordedBy: r.RecordedBy,
	}
	if r.PreviousHash != nil {
		f.PreviousHash = *r.PreviousHash
	}
	return f
}

// Proof is the inclusion proof of the leaf at LeafIndex: sibling hashes (hex)
// from the leaf upwards, as RFC 6962 orders an audit path.
type Proof struct {
	LeafIndex uint64   `json:"leaf_index"`
	Hashes    []string `json:"hashes"`
}

// Bundle is the portable proof of one finalized audit session. Records,
// Leaves and Proofs are parallel: entry i is leaf i, in recorded order.
type Bundle struct {
	Format     string   `json:"format"`
	Session    Session  `json:"session"`
	Records    []Record `json:"records"`
	Leaves     []string `json:"leaves"`
	Root       string   `json:"root"`
	TreeSize   uint64   `json:"tree_size"`
	TreeDepth  int      `json:"tree_depth"`
	Proofs     []Proof  `json:"proofs"`
	Checkpoint string   `json:"checkpoint"`
}

// Origin is the checkpoint origin line of a session's tree: the key name, then
// the session id, so a checkpoint cannot be replayed for another session.
func Origin(keyName, sessionID string) string {
	return keyName + "/audit/" + sessionID
}

// CheckpointBody returns the C2SP tlog-checkpoint body: origin, decimal tree
// size and base64 root hash, one per line, newline-terminated, followed by
// the optional extension lines (each without its newline).
func CheckpointBody(origin string, size uint64, root []byte, extensions ...string) string {
	var b strings.Builder
	b.WriteString(origin + "\n" + strconv.FormatUint(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root) + "\n")
	for _, e := range extensions {
		b.WriteString(e + "\n")
	}
	return b.String()
}

// sessionExtension prefixes the checkpoint extension line that binds the
// session metadata, which the root alone does not cover.
const sessionExtension = "cairn-session-sha256 "

// SessionDigest returns the lowercase hex SHA-256 of the session metadata
// serialized as JSON.stringify would serialize the object {session_id,
// task_id, task_ids, auditor_id, reason, scope, started_at, finalized_at}
// (absent optional fields as ""). The signed checkpoint carries it as the
// extension line "cairn-session-sha256 <hex>", so that the scope, task set
// and finalization time cannot be changed without the key.
func SessionDigest(s Session) (string, error) {
	ids := make([]any, len(s.TaskIDs))
	for i, id := range s.TaskIDs {
		ids[i] = id
	}
	text, err := trail.Stringify(trail.Object{
		{Key: "session_id", Value: s.SessionID}, {Key: "task_id", Value: s.TaskID},
		{Key: "task_ids", Value: ids}, {Key: "auditor_id", Value: s.AuditorID},
		{Key: "reason", Value: s.Reason}, {Key: "scope", Value: s.Scope},
		{Key: "started_at", Value: s.StartedAt}, {Key: "finalized_at", Value: s.FinalizedAt},
	})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), nil
}

// BuildBundle assembles and signs the bundle of a session. records are the
// session's records in recorded (leaf) order. It refuses to sign a trail that
// does not verify, and, when frozenRoot (hex) is not empty, a record set whose
// root differs from the root frozen by merkle_finalize.
func BuildBundle(sess Session, records []Record, frozenRoot string, signer note.Signer) (*Bundle, error) {
	if signer == nil {
		return nil, fmt.Errorf("build bundle: no signer")
	}
	if sess.SessionID == "" || strings.ContainsAny(sess.SessionID, "\n\r") {
		return nil, fmt.Errorf("build bundle: session id %q cannot be a checkpoint origin", sess.SessionID)
	}
	var c collector
	checkRecords(&c, &sess, records)
	if err := c.err(); err != nil {
		return nil, fmt.Errorf("build bundle: the stored trail does not verify, refusing to sign it: %w", err)
	}
	leaves := make([][]byte, len(records))
	for i := range records {
		leaves[i], _ = hex.DecodeString(records[i].Hash) // checked above
	}
	t, err := tree.New(leaves)
	if err != nil {
		return nil, fmt.Errorf("build bundle: %w", err)
	}
	root := t.Root()
	if frozenRoot != "" && frozenRoot != hex.EncodeToString(root) {
		return nil, fmt.Errorf("build bundle: root of the %d records is %x, but the session froze %s", len(records), root, frozenRoot)
	}
	b := &Bundle{
		Format:    Format,
		Session:   sess,
		Records:   records,
		Leaves:    make([]string, len(records)),
		Root:      hex.EncodeToString(root),
		TreeSize:  t.Size(),
		TreeDepth: tree.TreeDepth(t.Size()),
		Proofs:    make([]Proof, len(records)),
	}
	for i := range records {
		b.Leaves[i] = records[i].Hash
		path, err := t.InclusionProof(uint64(i))
		if err != nil {
			return nil, fmt.Errorf("build bundle: proof of leaf %d: %w", i, err)
		}
		p := Proof{LeafIndex: uint64(i), Hashes: make([]string, len(path))}
		for j, h := range path {
			p.Hashes[j] = hex.EncodeToString(h)
		}
		b.Proofs[i] = p
	}
	digest, err := SessionDigest(sess)
	if err != nil {
		return nil, fmt.Errorf("build bundle: session metadata: %w", err)
	}
	body := CheckpointBody(Origin(signer.Name(), sess.SessionID), t.Size(), root, sessionExtension+digest)
	msg, err := note.Sign(&note.Note{Text: body}, signer)
	if err != nil {
		return nil, fmt.Errorf("build bundle: sign checkpoint: %w", err)
	}
	b.Checkpoint = string(msg)
	return b, nil
}

// Parse decodes a bundle from JSON, refusing anything that is not a bundle.
func Parse(data []byte) (*Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("bundle is not valid JSON: %w", err)
	}
	if b.Format != Format {
		return nil, fmt.Errorf("bundle format is %q, want %q", b.Format, Format)
	}
	return &b, nil
}

// Marshal encodes a bundle as indented JSON, the file `cairn audit export`
// writes.
func (b *Bundle) Marshal() ([]byte, error) {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
