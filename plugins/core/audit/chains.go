// Package audit is the decision trail of Area A: per-task hash chains of
// thought records and task events, audit sessions that verify them, and the
// Merkle roots that seal a session's records (docs/decisions.md D11, D12).
//
// It stores everything in the core store next to the tasks, so a task change
// and its event-chain link commit in one transaction, and it knows nothing of
// MCP or gRPC: the core plugin wires its inputs and outputs (whose JSON tags
// are the specification's field names) to the thought_* , audit_* and
// merkle_* tools. Hashing and verification rules live in package trail, the
// tree in trail/tree; this package only reads and writes links.
package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Chain bytes in link keys.
const (
	chainThought byte = 't'
	chainEvent   byte = 'e'
)

func chainName(c byte) string {
	if c == chainThought {
		return trail.ChainThought
	}
	return trail.ChainEvent
}

// linkBody is the body of a stored link (codec.go). The task id and
// position are the key; the record's sequence number and hash sit in a fixed
// prefix so that collecting a session's Merkle leaves decodes no body.
type linkBody struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Content      string          `json:"content"`
	PreviousHash *string         `json:"previous_hash"`
	RecordedAt   string          `json:"recorded_at"`
	RecordedBy   string          `json:"recorded_by"`
	Branch       string          `json:"branch,omitempty"`
	CommitSHA    string          `json:"commit_sha,omitempty"`
	TestsRun     []string        `json:"tests_run,omitempty"`
	Blockers     []string        `json:"blockers,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	// TraceID is the trace of the call that wrote the link; it is not
	// hashed (docs/decisions.md D38).
	TraceID string `json:"trace_id,omitempty"`
}

// link is a decoded stored link.
type link struct {
	task  uint64
	chain byte
	pos   int
	seq   uint64
	hash  [32]byte
	body  linkBody
}

const linkPrefix = 8 + 32 // seq, raw hash

func linkKey(task uint64, chain byte, pos int) []byte { return linkAt(task, chain, uint64(pos)) }

// linkAt is the key of position pos of one chain in the links bucket.
func linkAt(task uint64, chain byte, pos uint64) []byte {
	k := make([]byte, 17)
	binary.BigEndian.PutUint64(k, task)
	k[8] = chain
	binary.BigEndian.PutUint64(k[9:], pos)
	return k
}

// chainPrefix is the prefix of every key of one chain.
func chainPrefix(task uint64, chain byte) []byte {
	k := make([]byte, 9)
	binary.BigEndian.PutUint64(k, task)
	k[8] = chain
	return k
}

// headKey is where a chain's head is kept: in the links bucket, past any
// position a link can have (schema v8), so an append writes its link and
// the new head on the same leaf page.
func headKey(task uint64, chain byte) []byte { return linkAt(task, chain, headPos) }

// headPos is the position part of a head's key.
const headPos = ^uint64(0)

// isHeadKey reports whether a key of the links bucket holds a head.
func isHeadKey(k []byte) bool { return len(k) == 17 && binary.BigEndian.Uint64(k[9:]) == headPos }

func encodeLink(l *link) []byte {
	v := make([]byte, linkPrefix, linkPrefix+64+len(l.body.Content)+len(l.body.Metadata))
	binary.BigEndian.PutUint64(v, l.seq)
	copy(v[8:], l.hash[:])
	return encodeBody(v, &l.body)
}

// decodeLink decodes the value stored under key k. A value that does not
// decode is reported as corrupt: the store was damaged or edited by hand.
func decodeLink(k, v []byte, withBody bool) (link, error) {
	var l link
	if len(k) != 17 || len(v) < linkPrefix {
		return l, fmt.Errorf("corrupt chain link %x", k)
	}
	l.task = binary.BigEndian.Uint64(k)
	l.chain = k[8]
	l.pos = int(binary.BigEndian.Uint64(k[9:]))
	l.seq = binary.BigEndian.Uint64(v)
	copy(l.hash[:], v[8:linkPrefix])
	if withBody {
		if err := decodeBody(v[linkPrefix:], &l.body); err != nil {
			return l, fmt.Errorf("corrupt chain link %s position %d: %v", taskID(l.task), l.pos, err)
		}
	}
	return l, nil
}

func taskID(n uint64) string { return tasks.FormatTaskID(n) }

// fields returns the hash inputs of a stored link.
func (l *link) fields() trail.Fields {
	f := trail.Fields{
		TaskID: taskID(l.task), Type: l.body.Type, Content: l.body.Content,
		RecordedAt: l.body.RecordedAt, RecordedBy: l.body.RecordedBy,
	}
	if l.body.PreviousHash != nil {
		f.PreviousHash = *l.body.PreviousHash
	}
	return f
}

func (l *link) hashHex() string { return hex.EncodeToString(l.hash[:]) }

// trailLink is the link as trail.VerifyChains sees it.
func (l *link) trailLink() trail.Link {
	return trail.Link{Chain: chainName(l.chain), RecordID: l.body.ID, Hash: l.hashHex(), Fields: l.fields(), Position: l.pos, TraceID: l.body.TraceID}
}

// eventRecordID names an event-chain record: D6 gives event records no id
// space of their own, so the id says where the record sits.
func eventRecordID(task uint64, pos int) string {
	return taskID(task) + "/event/" + strconv.Itoa(pos)
}

// appendLink appends body to a chain inside tx: it reads the chain head,
// links to it, hashes the record by the specification's rule and writes the
// link and the new head. It reads before it writes, which Store.Commit's
// contract needs. The id of a thought record is assigned by the caller
// through setID, after the reads.
func appendLink(tx kv.Tx, task uint64, chain byte, body linkBody, setID func(pos int) (string, error)) (link, error) {
	links := tx.Bucket([]byte(store.BucketChainLinks))
	hk := headKey(task, chain)
	pos := 1
	body.PreviousHash = nil
	if h := links.Get(hk); h != nil {
		if len(h) != 40 {
			return link{}, fmt.Errorf("corrupt chain head of %s", taskID(task))
		}
		pos = int(binary.BigEndian.Uint64(h)) + 1
		prev := hex.EncodeToString(h[8:40])
		body.PreviousHash = &prev
	}
	l := link{task: task, chain: chain, pos: pos, body: body}
	sum, err := func() ([32]byte, error) { f := l.fields(); return f.Sum() }()
	if err != nil {
		return link{}, err
	}
	l.hash = sum
	id, err := setID(pos)
	if err != nil {
		return link{}, err
	}
	l.body.ID = id
	seq, err := store.NextID(tx, store.CounterRecord)
	if err != nil {
		return link{}, err
	}
	l.seq = seq
	if err := links.Put(linkKey(task, chain, pos), encodeLink(&l)); err != nil {
		return link{}, err
	}
	head := make([]byte, 40)
	binary.BigEndian.PutUint64(head, uint64(pos))
	copy(head[8:], sum[:])
	return l, links.Put(hk, head)
}

// eachLink calls fn for every link of one chain in position order.
func eachLink(tx kv.Tx, task uint64, chain byte, withBody bool, fn func(l *link) error) error {
	c := tx.Bucket([]byte(store.BucketChainLinks)).Cursor()
	prefix := chainPrefix(task, chain)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && !isHeadKey(k); k, v = c.Next() {
		l, err := decodeLink(k, v, withBody)
		if err != nil {
			return corrupt(err)
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return nil
}

// chainLen is the position of a chain's head: its length, read without a
// scan so callers can size their slices. It is only a size hint, bounded so
// that a forged head cannot make a caller allocate without limit.
func chainLen(tx kv.Tx, task uint64, chain byte) int {
	h := tx.Bucket([]byte(store.BucketChainLinks)).Get(headKey(task, chain))
	if len(h) != 40 {
		return 0
	}
	return int(min(binary.BigEndian.Uint64(h), maxLenHint))
}

const maxLenHint = 1 << 16

// getLink reads one link, or reports ok=false.
func getLink(tx kv.Tx, task uint64, chain byte, pos int) (link, bool, error) {
	k := linkKey(task, chain, pos)
	v := tx.Bucket([]byte(store.BucketChainLinks)).Get(k)
	if v == nil {
		return link{}, false, nil
	}
	l, err := decodeLink(k, v, true)
	if err != nil {
		return link{}, false, corrupt(err)
	}
	return l, true, nil
}

// corrupt wraps damage found in the store as an internal error that tells the
// operator what to do.
func corrupt(err error) error {
	return errs.Newf(500, errs.Internal, "%v; the core store is damaged: run audit_verify_chain to see which records, and restore the store from a backup", err)
}

// taskExists reports whether task number n exists.
func taskExists(tx kv.Tx, n uint64) bool {
	return tx.Bucket([]byte(store.BucketTasks)).Get(store.U64(n)) != nil
}

// descendants returns root followed by every task below it (breadth first),
// read from the children index.
func descendants(tx kv.Tx, root uint64) []uint64 {
	out := []uint64{root}
	seen := map[uint64]bool{root: true}
	c := tx.Bucket([]byte(store.BucketTaskChildren)).Cursor()
	for i := 0; i < len(out); i++ {
		prefix := store.U64(out[i])
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != 16 {
				continue
			}
			child := binary.BigEndian.Uint64(k[8:])
			if !seen[child] {
				seen[child] = true
				out = append(out, child)
			}
		}
	}
	return out
}
