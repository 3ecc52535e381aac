package audit

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"sort"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/internal/trail/tree"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Audit scopes: shallow covers the task, deep the task and all its
// descendants (D12).
const (
	ScopeShallow = "shallow"
	ScopeDeep    = "deep"
)

// session is an audit session as stored.
type session struct {
	SessionID string  `json:"session_id"`
	TaskID    string  `json:"task_id"`
	AuditorID string  `json:"auditor_id"`
	Reason    string  `json:"reason,omitempty"`
	Scope     string  `json:"scope"`
	StartedAt string  `json:"started_at"`
	Frozen    *frozen `json:"frozen,omitempty"`

	num uint64
}

// frozen is what merkle_finalize fixed; the record set itself is in
// BucketAuditFrozen.
type frozen struct {
	Root        string   `json:"root"`
	LeafCount   uint64   `json:"leaf_count"`
	TreeDepth   int      `json:"tree_depth"`
	FinalizedAt string   `json:"finalized_at"`
	TaskIDs     []string `json:"task_ids"`
	// RestrictedTo is merkle_finalize's task_id, when one was given.
	RestrictedTo string `json:"restricted_to,omitempty"`
	// LeafHashes: the frozen record set keeps each sealed leaf next to its
	// reference (vouch.go); false for sessions finalized before it did.
	LeafHashes bool `json:"leaf_hashes,omitempty"`
}

func parseSessionID(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok || rest == "" || rest[0] == '0' || len(rest) > 19 {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return n, err == nil
}

// loadSession reads a session; an unknown or malformed id is a 404 with the
// given code (the tools differ: ERR_SESSION_NOT_FOUND or ERR_NOT_FOUND).
func loadSession(tx kv.Tx, field, id, notFound string) (*session, error) {
	n, ok := parseSessionID(id)
	if !ok {
		return nil, errs.Invalidf(field, "pattern", "%s %q is not an audit session id; session ids look like \"A-3\"", field, clip(id))
	}
	raw := tx.Bucket([]byte(store.BucketAuditSessions)).Get(store.U64(n))
	if raw == nil {
		return nil, errs.NotFoundf(notFound, field, "audit session %s does not exist; start one with audit_session_start", id)
	}
	var s session
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, corrupt(fmt.Errorf("corrupt audit session %s: %v", id, err))
	}
	s.num = n
	return &s, nil
}

func putSession(tx kv.Tx, s *session) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(store.BucketAuditSessions)).Put(store.U64(s.num), raw)
}

// scope returns the task numbers the session covers: the frozen set once
// finalized, else the task (and, deep, its current descendants).
func (s *session) scope(tx kv.Tx) []uint64 {
	if s.Frozen != nil {
		out := make([]uint64, 0, len(s.Frozen.TaskIDs))
		for _, id := range s.Frozen.TaskIDs {
			if n, ok := parseTaskNum(id); ok {
				out = append(out, n)
			}
		}
		return out
	}
	root, _ := parseTaskNum(s.TaskID)
	if s.Scope == ScopeDeep {
		return descendants(tx, root)
	}
	return []uint64{root}
}

func parseTaskNum(id string) (uint64, bool) {
	n, err := checkTaskID("task_id", id)
	return n, err == nil
}

// StartInput is audit_session_start's input.
type StartInput struct {
	TaskID    string  `json:"task_id"`
	AuditorID string  `json:"auditor_id"`
	Reason    *string `json:"reason,omitempty"`
	Scope     *string `json:"scope,omitempty"`
}

// StartOutput is audit_session_start's output.
type StartOutput struct {
	SessionID string `json:"session_id"`
	TaskID    string `json:"task_id"`
	AuditorID string `json:"auditor_id"`
	Reason    string `json:"reason,omitempty"`
	StartedAt string `json:"started_at"`
	Scope     string `json:"scope" jsonschema:"enum=shallow,enum=deep"`
}

// StartSession opens an audit session over a task (audit_session_start).
func (s *Service) StartSession(in StartInput) (StartOutput, error) {
	return s.StartSessionOnce(idempotency.Key{}, in)
}

// StartSessionOnce is StartSession under an idempotency key: a repeat of
// the key returns the session first started and starts none
// (docs/decisions.md D32).
func (s *Service) StartSessionOnce(key idempotency.Key, in StartInput) (StartOutput, error) {
	n, err := checkTaskID("task_id", in.TaskID)
	if err != nil {
		return StartOutput{}, err
	}
	if err := checkText("auditor_id", in.AuditorID, 1, MaxAuditorLen); err != nil {
		return StartOutput{}, err
	}
	sess := session{TaskID: in.TaskID, AuditorID: in.AuditorID, Scope: defaultAuditScope}
	if in.Reason != nil {
		if err := checkText("reason", *in.Reason, 0, MaxReasonLen); err != nil {
			return StartOutput{}, err
		}
		sess.Reason = *in.Reason
	}
	if in.Scope != nil {
		if *in.Scope != ScopeShallow && *in.Scope != ScopeDeep {
			return StartOutput{}, errs.Invalidf("scope", "enum", "scope %q is not shallow or deep", clip(*in.Scope))
		}
		sess.Scope = *in.Scope
	}
	sess.StartedAt = s.now()
	var out StartOutput
	var replayed bool
	err = s.st.Commit(func(tx kv.Tx) error {
		var err error
		out, replayed, err = store.Once(tx, key, s.cfg.Clock(), func() (StartOutput, error) {
			if !taskExists(tx, n) {
				return StartOutput{}, errs.NotFoundf(errs.TaskNotFound, "task_id", "task %s does not exist; check the id with task_list", in.TaskID)
			}
			num, err := store.NextID(tx, store.CounterAudit)
			if err != nil {
				return StartOutput{}, err
			}
			sess.num, sess.SessionID = num, sessionIDPrefix+strconv.FormatUint(num, 10)
			if err := putSession(tx, &sess); err != nil {
				return StartOutput{}, err
			}
			out := StartOutput{SessionID: sess.SessionID, TaskID: sess.TaskID, AuditorID: sess.AuditorID, Reason: sess.Reason, StartedAt: sess.StartedAt, Scope: sess.Scope}
			return out, s.record(tx, EventAuditStarted, startedEvent(&sess))
		})
		return err
	})
	if err != nil {
		return StartOutput{}, errs.From(err)
	}
	if !replayed {
		s.publish(EventAuditStarted, startedEvent(&sess))
	}
	return out, nil
}

// startedEvent is the audit.started event's data.
func startedEvent(sess *session) map[string]any {
	return map[string]any{
		"session_id": sess.SessionID, "task_id": sess.TaskID, "auditor_id": sess.AuditorID, "scope": sess.Scope, "started_at": sess.StartedAt,
	}
}

// VerifyInput is audit_verify_chain's input.
type VerifyInput struct {
	SessionID *string `json:"session_id,omitempty"`
	TaskID    *string `json:"task_id,omitempty"`
	FullTrace *bool   `json:"full_trace,omitempty"`
}

// VerifyOutput is audit_verify_chain's output. BrokenLinks name the chain,
// task and record besides the specification's position, expected and actual
// hash, and the head_mismatch and root_mismatch disagreements; Trace
// (full_trace) has one entry per record found. TotalRecords counts the links
// the chains should have: the records found plus MissingRecords, positions
// that a later record, the chain's head or a finalized root vouches for but
// that hold no record.
type VerifyOutput struct {
	SessionID      string             `json:"session_id,omitempty"`
	TaskID         string             `json:"task_id,omitempty"`
	ChainValid     bool               `json:"chain_valid"`
	TotalRecords   int                `json:"total_records"`
	VerifiedCount  int                `json:"verified_records"`
	MissingRecords int                `json:"missing_records"`
	IntegrityScore int                `json:"integrity_score"`
	BrokenLinks    []trail.BrokenLink `json:"broken_links"`
	VerifiedAt     string             `json:"verified_at"`
	Trace          []trail.TraceEntry `json:"trace,omitzero"`
}

// Verify recomputes both chains of every task in scope (audit_verify_chain):
// the session's tasks, or one task, or a task within a session when both ids
// are given. Each chain is checked against its links, the head the store
// wrote with its last append, and the leaves of every finalized session that
// sealed its records (vouch.go).
func (s *Service) Verify(in VerifyInput) (VerifyOutput, error) {
	if in.SessionID == nil && in.TaskID == nil {
		return VerifyOutput{}, errs.Invalid("session_id", "required", "give session_id (verify an audit session's tasks) or task_id (verify one task's chains)")
	}
	var out VerifyOutput
	err := s.st.View(func(tx kv.Tx) error {
		scope, err := resolveScope(tx, in.SessionID, in.TaskID, errs.NotFound, errs.NotFound)
		if err != nil {
			return err
		}
		out.SessionID, out.TaskID = deref(in.SessionID), deref(in.TaskID)
		var opts []trail.VerifyOption
		if in.FullTrace != nil && *in.FullTrace {
			opts = append(opts, trail.WithTrace())
		}
		r, err := verifyScope(tx, scope, []byte{chainEvent, chainThought}, opts...)
		if err != nil {
			return err
		}
		out.ChainValid, out.TotalRecords, out.VerifiedCount, out.MissingRecords = r.ChainValid, r.Total, r.Verified, r.Missing
		out.IntegrityScore, out.BrokenLinks, out.Trace = r.IntegrityScore, r.BrokenLinks, r.Trace
		if opts != nil && out.Trace == nil {
			out.Trace = []trail.TraceEntry{}
		}
		return nil
	})
	if err != nil {
		return VerifyOutput{}, errs.From(err)
	}
	out.VerifiedAt = s.now()
	return out, nil
}

// resolveScope returns the tasks a session_id and/or task_id designate:
// the session's scope, one task, or one task that must lie in the session's
// scope. The not-found codes differ per tool (the specification's part 7).
func resolveScope(tx kv.Tx, sessionID, taskID *string, sessionNotFound, taskNotFound string) ([]uint64, error) {
	var scope []uint64
	if sessionID != nil {
		sess, err := loadSession(tx, "session_id", *sessionID, sessionNotFound)
		if err != nil {
			return nil, err
		}
		scope = sess.scope(tx)
	}
	if taskID == nil {
		return scope, nil
	}
	n, err := checkTaskID("task_id", *taskID)
	if err != nil {
		return nil, err
	}
	if !taskExists(tx, n) {
		return nil, errs.NotFoundf(taskNotFound, "task_id", "task %s does not exist; check the id with task_list", *taskID)
	}
	if sessionID != nil && !containsNum(scope, n) {
		return nil, errs.Invalidf("task_id", "in_scope", "task %s is not in audit session %s's scope", *taskID, *sessionID)
	}
	return []uint64{n}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// leafRef locates one record of a session's leaf set.
type leafRef struct {
	task  uint64
	chain byte
	pos   int
	seq   uint64
	hash  [32]byte
}

const refSize = 17

func (r leafRef) pack(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, r.task)
	dst = append(dst, r.chain)
	return binary.BigEndian.AppendUint64(dst, uint64(r.pos))
}

// collectLeaves returns every record of the given tasks (both chains) in the
// order they were recorded: the session's Merkle leaves (D12).
func collectLeaves(tx kv.Tx, scope []uint64) ([]leafRef, error) {
	var refs []leafRef
	for _, n := range scope {
		for _, c := range []byte{chainEvent, chainThought} {
			if err := eachLink(tx, n, c, false, func(l *link) error {
				refs = append(refs, leafRef{task: l.task, chain: l.chain, pos: l.pos, seq: l.seq, hash: l.hash})
				return nil
			}); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].seq < refs[j].seq })
	return refs, nil
}

func rootOf(refs []leafRef) []byte {
	leaves := make([][]byte, len(refs))
	for i := range refs {
		leaves[i] = refs[i].hash[:]
	}
	return tree.Root(leaves)
}

// FinalizeInput is merkle_finalize's input.
type FinalizeInput struct {
	SessionID string  `json:"session_id"`
	TaskID    *string `json:"task_id,omitempty"`
}

// FinalizeOutput is merkle_finalize's output.
type FinalizeOutput struct {
	SessionID   string `json:"session_id"`
	TaskID      string `json:"task_id,omitempty"`
	MerkleRoot  string `json:"merkle_root"`
	TreeDepth   int    `json:"tree_depth"`
	LeafCount   uint64 `json:"leaf_count"`
	FinalizedAt string `json:"finalized_at"`
	Frozen      bool   `json:"frozen"`
}

// Finalize freezes a session's Merkle root, leaf count and record set
// (merkle_finalize). With task_id only that task's records are sealed.
func (s *Service) Finalize(in FinalizeInput) (FinalizeOutput, error) {
	return s.FinalizeOnce(idempotency.Key{}, in)
}

// FinalizeOnce is Finalize under an idempotency key: a repeat of the key
// returns the root first frozen instead of 409 ERR_ALREADY_FINALIZED
// (docs/decisions.md D32).
func (s *Service) FinalizeOnce(key idempotency.Key, in FinalizeInput) (FinalizeOutput, error) {
	var out FinalizeOutput
	var replayed bool
	var restrict uint64
	if in.TaskID != nil {
		n, err := checkTaskID("task_id", *in.TaskID)
		if err != nil {
			return out, err
		}
		restrict = n
	}
	now := s.now()
	err := s.st.Commit(func(tx kv.Tx) error {
		var err error
		out, replayed, err = store.Once(tx, key, s.cfg.Clock(), func() (FinalizeOutput, error) {
			return s.finalizeIn(tx, in, restrict, now)
		})
		return err
	})
	if err != nil {
		return FinalizeOutput{}, errs.From(err)
	}
	if !replayed {
		s.publish(EventAuditFinalized, finalizedEvent(out))
	}
	return out, nil
}

// finalizeIn freezes the session's root inside tx.
func (s *Service) finalizeIn(tx kv.Tx, in FinalizeInput, restrict uint64, now string) (FinalizeOutput, error) {
	sess, err := loadSession(tx, "session_id", in.SessionID, errs.SessionNotFound)
	if err != nil {
		return FinalizeOutput{}, err
	}
	if sess.Frozen != nil {
		return FinalizeOutput{}, errs.Conflictf(errs.AlreadyFinalized, "audit session %s was finalized at %s with root %s; its root is frozen — start a new session to seal newer records", sess.SessionID, sess.Frozen.FinalizedAt, sess.Frozen.Root).With("field", "session_id")
	}
	scope := sess.scope(tx)
	if restrict != 0 {
		if !containsNum(scope, restrict) {
			return FinalizeOutput{}, errs.Invalidf("task_id", "in_scope", "task %s is not in audit session %s's scope (%s over %s)", *in.TaskID, sess.SessionID, sess.Scope, sess.TaskID)
		}
		scope = []uint64{restrict}
	}
	refs, err := collectLeaves(tx, scope)
	if err != nil {
		return FinalizeOutput{}, err
	}
	root := rootOf(refs)
	f := &frozen{
		Root: hex.EncodeToString(root), LeafCount: uint64(len(refs)), TreeDepth: tree.TreeDepth(uint64(len(refs))),
		FinalizedAt: now, TaskIDs: make([]string, len(scope)), LeafHashes: true,
	}
	for i, n := range scope {
		f.TaskIDs[i] = taskID(n)
	}
	if in.TaskID != nil {
		f.RestrictedTo = *in.TaskID
	}
	if err := tx.Bucket([]byte(store.BucketAuditFrozen)).Put(store.U64(sess.num), packSealed(refs)); err != nil {
		return FinalizeOutput{}, err
	}
	sess.Frozen = f
	if err := putSession(tx, sess); err != nil {
		return FinalizeOutput{}, err
	}
	out := FinalizeOutput{
		SessionID: sess.SessionID, TaskID: f.RestrictedTo, MerkleRoot: f.Root, TreeDepth: f.TreeDepth,
		LeafCount: f.LeafCount, FinalizedAt: f.FinalizedAt, Frozen: true,
	}
	return out, s.record(tx, EventAuditFinalized, finalizedEvent(out))
}

// finalizedEvent is the audit.finalized event's data.
func finalizedEvent(out FinalizeOutput) map[string]any {
	return map[string]any{
		"session_id": out.SessionID, "merkle_root": out.MerkleRoot, "leaf_count": out.LeafCount,
		"tree_depth": out.TreeDepth, "finalized_at": out.FinalizedAt,
	}
}

// RootInput is merkle_root's input.
type RootInput struct {
	SessionID string `json:"session_id"`
}

// RootOutput is merkle_root's output. AsOf is the time of the last change
// the root reflects: the latest record's time for an open session (its start
// when it has none), the finalization time for a frozen one.
type RootOutput struct {
	SessionID   string `json:"session_id"`
	MerkleRoot  string `json:"merkle_root"`
	IsFinalized bool   `json:"is_finalized"`
	AsOf        string `json:"as_of"`
	LeafCount   uint64 `json:"leaf_count"`
	TreeDepth   int    `json:"tree_depth"`
}

// Root reports a session's Merkle root (merkle_root): the frozen root once
// finalized, else the root over the records in scope now.
func (s *Service) Root(in RootInput) (RootOutput, error) {
	var out RootOutput
	err := s.st.View(func(tx kv.Tx) error {
		sess, err := loadSession(tx, "session_id", in.SessionID, errs.SessionNotFound)
		if err != nil {
			return err
		}
		out.SessionID = sess.SessionID
		if f := sess.Frozen; f != nil {
			out.MerkleRoot, out.IsFinalized, out.AsOf, out.LeafCount, out.TreeDepth = f.Root, true, f.FinalizedAt, f.LeafCount, f.TreeDepth
			return nil
		}
		refs, err := collectLeaves(tx, sess.scope(tx))
		if err != nil {
			return err
		}
		out.MerkleRoot = hex.EncodeToString(rootOf(refs))
		out.LeafCount, out.TreeDepth = uint64(len(refs)), tree.TreeDepth(uint64(len(refs)))
		out.AsOf = sess.StartedAt
		if len(refs) > 0 {
			last := refs[len(refs)-1]
			l, ok, err := getLink(tx, last.task, last.chain, last.pos)
			if err != nil {
				return err
			}
			if ok && l.body.RecordedAt > out.AsOf {
				out.AsOf = l.body.RecordedAt
			}
		}
		return nil
	})
	if err != nil {
		return RootOutput{}, errs.From(err)
	}
	return out, nil
}

// Export returns a finalized session's metadata, its frozen records in leaf
// order and the frozen root, ready for bundle.BuildBundle (D13). An open
// session has no fixed record set to prove: finalize it first.
func (s *Service) Export(sessionID string) (bundle.Session, []bundle.Record, string, error) {
	var meta bundle.Session
	var records []bundle.Record
	var root string
	err := s.st.View(func(tx kv.Tx) error {
		sess, err := loadSession(tx, "session_id", sessionID, errs.SessionNotFound)
		if err != nil {
			return err
		}
		f := sess.Frozen
		if f == nil {
			return errs.Conflictf(errs.Conflict, "audit session %s is still open; finalize it (merkle_finalize) before exporting its proof", sess.SessionID)
		}
		meta = bundle.Session{
			SessionID: sess.SessionID, TaskID: sess.TaskID, TaskIDs: f.TaskIDs, AuditorID: sess.AuditorID,
			Reason: sess.Reason, Scope: sess.Scope, StartedAt: sess.StartedAt, FinalizedAt: f.FinalizedAt,
		}
		root = f.Root
		refs, err := frozenRefs(tx, sess)
		if err != nil {
			return corrupt(err)
		}
		records = make([]bundle.Record, 0, len(refs))
		for _, r := range refs {
			task, chain, pos := r.task, r.chain, r.pos
			l, ok, err := getLink(tx, task, chain, pos)
			if err != nil {
				return err
			}
			if !ok {
				return corrupt(fmt.Errorf("record %s %s position %d of frozen session %s is missing", taskID(task), chainName(chain), pos, sess.SessionID))
			}
			rec := bundle.NewRecord(l.body.ID, chainName(chain), pos, l.fields(), l.hashHex())
			rec.TraceID = l.body.TraceID
			records = append(records, rec)
		}
		return nil
	})
	if err != nil {
		return bundle.Session{}, nil, "", errs.From(err)
	}
	return meta, records, root, nil
}
