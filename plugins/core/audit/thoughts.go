package audit

import (
	"bytes"
	"encoding/json"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Limits of thought records: the specification's (content) and ours for the
// optional fields it leaves open, so one record cannot bloat the store.
const (
	MaxContentLen     = 5000
	MaxBranchLen      = 255
	MaxCommitLen      = 128
	MaxListItems      = 100
	MaxListItemLen    = 1000
	MaxMetadataBytes  = 16 * 1024
	DefaultListLimit  = 100
	MaxListLimit      = 500
	MaxAuditorLen     = 128
	MaxReasonLen      = 2000
	thoughtIDPrefix   = "Θ-"
	sessionIDPrefix   = "A-"
	defaultAuditScope = ScopeShallow
)

// ThoughtTypes are the thought types of the specification.
var ThoughtTypes = []string{"reflection", "decision", "discovery", "risk", "blockers"}

// Event types published on the host bus (D19).
const (
	EventThoughtRecorded = "thought.recorded"
	EventAuditStarted    = "audit.started"
	EventAuditFinalized  = "audit.finalized"
)

// Config wires a Service to its surroundings; every field is optional.
type Config struct {
	// Clock returns the current time; tests inject a fixed clock.
	Clock func() time.Time
	// Publish is called after a write commits (D19 events). With Record
	// set, the events are already recorded: Publish only tells that they
	// await publication.
	Publish func(eventType string, data any)
	// Record, when set, records each event inside the transaction of the
	// write that causes it (the store's outbox).
	Record func(tx kv.Tx, eventType string, data map[string]any, at time.Time) error
}

// Service runs the decision trail over a core store. It is safe for
// concurrent use.
type Service struct {
	st  *store.Store
	cfg Config
}

// New returns a Service over st.
func New(st *store.Store, cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Service{st: st, cfg: cfg}
}

func (s *Service) now() string { return tasks.FormatTime(s.cfg.Clock()) }

// record records an event in the write's transaction when Record is set.
func (s *Service) record(tx kv.Tx, eventType string, data map[string]any) error {
	if s.cfg.Record == nil {
		return nil
	}
	return s.cfg.Record(tx, eventType, data, s.cfg.Clock())
}

func (s *Service) publish(eventType string, data map[string]any) {
	if s.cfg.Publish != nil {
		s.cfg.Publish(eventType, data)
	}
}

// AppendTaskChange appends a task_created or task_updated record to the
// task's event chain. It is the tasks.Config.OnChange hook, so it runs inside
// the transaction that writes the task change (D11).
func (s *Service) AppendTaskChange(tx kv.Tx, ch tasks.Change) error {
	content, err := trail.Stringify(ch.Data)
	if err != nil {
		return err
	}
	body := linkBody{Type: ch.Kind, Content: content, RecordedAt: ch.At, RecordedBy: ch.Actor, TraceID: ch.TraceID}
	if ch.Kind == tasks.ChangeCreated {
		// A task just created has no chains yet.
		links := tx.Bucket([]byte(store.BucketChainLinks))
		links.Fresh(headKey(ch.Num, chainEvent))
		links.Fresh(headKey(ch.Num, chainThought))
	}
	_, err = appendLink(tx, ch.Num, chainEvent, body, func(pos int) (string, error) {
		return eventRecordID(ch.Num, pos), nil
	})
	return err
}

// ThoughtTrail returns the ids of a task's thought records in chain order;
// it is the tasks.Config.ThoughtTrail hook behind task_get.
func (s *Service) ThoughtTrail(tx kv.Tx, id string) ([]string, error) {
	n, ok := tasks.ParseTaskID(id)
	if !ok {
		return nil, nil
	}
	out := []string{}
	err := eachLink(tx, n, chainThought, true, func(l *link) error {
		out = append(out, l.body.ID)
		return nil
	})
	return out, err
}

// RecordInput is thought_record's input.
type RecordInput struct {
	TaskID    string          `json:"task_id"`
	Type      string          `json:"type"`
	Content   string          `json:"content"`
	Branch    *string         `json:"branch,omitempty"`
	CommitSHA *string         `json:"commit_sha,omitempty"`
	TestsRun  []string        `json:"tests_run,omitempty"`
	Blockers  []string        `json:"blockers,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// RecordOutput is thought_record's output.
type RecordOutput struct {
	ThoughtID     string  `json:"thought_id"`
	TaskID        string  `json:"task_id"`
	Type          string  `json:"type" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Hash          string  `json:"hash"`
	PreviousHash  *string `json:"previous_hash" jsonschema:"oneof_type=string;null"`
	RecordedAt    string  `json:"recorded_at"`
	RecordedBy    string  `json:"recorded_by"`
	ChainPosition int     `json:"chain_position"`
}

func (in *RecordInput) validate() (uint64, linkBody, error) {
	var body linkBody
	n, err := checkTaskID("task_id", in.TaskID)
	if err != nil {
		return 0, body, err
	}
	if !isOneOf(in.Type, ThoughtTypes) {
		return 0, body, errs.Invalidf("type", "enum", "type %q is not a thought type; use one of %s", clip(in.Type), strings.Join(ThoughtTypes, ", "))
	}
	if err := checkText("content", in.Content, 1, MaxContentLen); err != nil {
		return 0, body, err
	}
	body = linkBody{Type: in.Type, Content: in.Content}
	if in.Branch != nil {
		if err := checkText("branch", *in.Branch, 0, MaxBranchLen); err != nil {
			return 0, body, err
		}
		body.Branch = *in.Branch
	}
	if in.CommitSHA != nil {
		if err := checkText("commit_sha", *in.CommitSHA, 0, MaxCommitLen); err != nil {
			return 0, body, err
		}
		body.CommitSHA = *in.CommitSHA
	}
	if body.TestsRun, err = checkList("tests_run", in.TestsRun); err != nil {
		return 0, body, err
	}
	if body.Blockers, err = checkList("blockers", in.Blockers); err != nil {
		return 0, body, err
	}
	if m := bytes.TrimSpace(in.Metadata); len(m) > 0 && !bytes.Equal(m, []byte("null")) {
		if m[0] != '{' {
			return 0, body, errs.Invalid("metadata", "type", "metadata must be a JSON object")
		}
		if len(m) > MaxMetadataBytes {
			return 0, body, errs.Invalidf("metadata", "maxLength", "metadata must be at most %d bytes of JSON, got %d; keep large data elsewhere and link to it", MaxMetadataBytes, len(m))
		}
		// Stringify refuses strings that are not UTF-8 (D11) and gives the
		// compact form we store.
		compact, err := trail.Stringify(json.RawMessage(m))
		if err != nil {
			return 0, body, err
		}
		body.Metadata = json.RawMessage(compact)
	}
	return n, body, nil
}

// Record appends a thought record to its task's thought chain (thought_record).
// Concurrent calls share durable commits (Store.Commit) and each chain stays
// linear: the head is read and written in the same transaction.
func (s *Service) Record(actor string, in RecordInput) (RecordOutput, error) {
	return s.RecordOnce(actor, idempotency.Key{}, "", in)
}

// RecordOnce is Record under an idempotency key: the key and the output are
// kept in the same transaction as the link, and a key seen before returns
// its first output without appending again (a replay after the daemon died).
// traceID, the trace of the call (empty: untraced), is kept beside the
// record, outside its hash (docs/decisions.md D38).
func (s *Service) RecordOnce(actor string, key idempotency.Key, traceID string, in RecordInput) (RecordOutput, error) {
	n, body, err := in.validate()
	if err != nil {
		return RecordOutput{}, err
	}
	body.TraceID = traceID
	body.RecordedBy = actorOrUnknown(actor)
	body.RecordedAt = s.now()
	var out RecordOutput
	var replayed bool
	err = s.st.CommitShared(func(tx kv.Tx) error {
		if tx.Shared() {
			tx.Prefetch(store.OnceKeys(key,
				kv.Key{Bucket: []byte(store.BucketTasks), Key: store.U64(n)},
				kv.Key{Bucket: []byte(store.BucketChainLinks), Key: headKey(n, chainThought)})...)
		}
		var err error
		out, replayed, err = store.Once(tx, key, s.cfg.Clock(), func() (RecordOutput, error) {
			if !taskExists(tx, n) {
				return RecordOutput{}, errs.NotFoundf(errs.TaskNotFound, "task_id", "task %s does not exist; check the id with task_list", in.TaskID)
			}
			// The thought's id and its record number, in one round trip.
			if err := store.DrawAhead(tx, store.CounterThought, store.CounterRecord); err != nil {
				return RecordOutput{}, err
			}
			l, err := appendLink(tx, n, chainThought, body, func(int) (string, error) {
				id, err := store.NextID(tx, store.CounterThought)
				return thoughtIDPrefix + strconv.FormatUint(id, 10), err
			})
			if err != nil {
				return RecordOutput{}, err
			}
			out := RecordOutput{
				ThoughtID: l.body.ID, TaskID: in.TaskID, Type: l.body.Type, Hash: l.hashHex(),
				PreviousHash: l.body.PreviousHash, RecordedAt: l.body.RecordedAt, RecordedBy: l.body.RecordedBy,
				ChainPosition: l.pos,
			}
			return out, s.record(tx, EventThoughtRecorded, thoughtEvent(out))
		})
		return err
	})
	if err != nil {
		return RecordOutput{}, errs.From(err)
	}
	if replayed {
		return out, nil
	}
	s.publish(EventThoughtRecorded, thoughtEvent(out))
	return out, nil
}

// thoughtEvent is the thought.recorded event's data.
func thoughtEvent(out RecordOutput) map[string]any {
	return map[string]any{
		"thought_id": out.ThoughtID, "task_id": out.TaskID, "type": out.Type, "hash": out.Hash,
		"chain_position": out.ChainPosition, "recorded_by": out.RecordedBy, "recorded_at": out.RecordedAt,
	}
}

// ListInput is thought_record_list's input.
type ListInput struct {
	TaskID    *string `json:"task_id,omitempty"`
	SessionID *string `json:"session_id,omitempty"`
	Type      *string `json:"type,omitempty"`
	Limit     *int    `json:"limit,omitempty"`
	// Offset skips the newest `offset` matches, so a caller pages back
	// through a chain longer than one page.
	Offset      *int  `json:"offset,omitempty"`
	VerifyChain *bool `json:"verify_chain,omitempty"`
}

// Thought is one thought record as thought_record_list shows it.
type Thought struct {
	ThoughtID     string          `json:"thought_id"`
	TaskID        string          `json:"task_id"`
	Type          string          `json:"type" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Content       string          `json:"content"`
	Hash          string          `json:"hash"`
	PreviousHash  *string         `json:"previous_hash" jsonschema:"oneof_type=string;null"`
	RecordedAt    string          `json:"recorded_at"`
	RecordedBy    string          `json:"recorded_by"`
	ChainPosition int             `json:"chain_position"`
	Branch        string          `json:"branch,omitempty"`
	CommitSHA     string          `json:"commit_sha,omitempty"`
	TestsRun      []string        `json:"tests_run,omitempty"`
	Blockers      []string        `json:"blockers,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	// TraceID is the W3C trace id of the call that recorded it; not part of
	// its hash (docs/decisions.md D38).
	TraceID string `json:"trace_id,omitempty"`
}

// ListOutput is thought_record_list's output. Thoughts holds the latest
// `limit` matching records after skipping the newest `offset`, oldest first;
// TotalCount counts every match.
type ListOutput struct {
	TaskID       string    `json:"task_id,omitempty"`
	SessionID    string    `json:"session_id,omitempty"`
	ThoughtCount int       `json:"thought_count"`
	TotalCount   int       `json:"total_count"`
	Thoughts     []Thought `json:"thoughts"`
	// ChainValid and InvalidLinks cover the whole thought chain(s), not only
	// the returned page, checked as audit_verify_chain checks them (links,
	// head, finalized roots); InvalidLinks holds the distinct chain positions
	// of its broken_links entries and InvalidRecords the ids of the records
	// among them that exist.
	ChainValid     *bool    `json:"chain_valid,omitempty"`
	InvalidLinks   []int    `json:"invalid_links,omitzero"`
	InvalidRecords []string `json:"invalid_records,omitzero"`
}

// List returns thought records of a task or of an audit session's tasks
// (thought_record_list).
func (s *Service) List(in ListInput) (ListOutput, error) {
	limit := DefaultListLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxListLimit {
			return ListOutput{}, errs.Invalidf("limit", rangeKeyword(*in.Limit, 1), "limit must be between 1 and %d, got %d", MaxListLimit, *in.Limit)
		}
		limit = *in.Limit
	}
	offset := 0
	if in.Offset != nil {
		if *in.Offset < 0 {
			return ListOutput{}, errs.Invalidf("offset", "minimum", "offset must be 0 or more, got %d", *in.Offset)
		}
		offset = *in.Offset
	}
	if in.Type != nil && !isOneOf(*in.Type, ThoughtTypes) {
		return ListOutput{}, errs.Invalidf("type", "enum", "type %q is not a thought type; use one of %s", clip(*in.Type), strings.Join(ThoughtTypes, ", "))
	}
	if in.TaskID == nil && in.SessionID == nil {
		return ListOutput{}, errs.Invalid("task_id", "required", "give task_id (one task's thoughts) or session_id (the thoughts of an audit session's tasks)")
	}
	var out ListOutput
	err := s.st.View(func(tx kv.Tx) error {
		scope, err := resolveScope(tx, in.SessionID, in.TaskID, errs.SessionNotFound, errs.TaskNotFound)
		if err != nil {
			return err
		}
		out.SessionID, out.TaskID = deref(in.SessionID), deref(in.TaskID)
		var all []link
		for _, n := range scope {
			err := eachLink(tx, n, chainThought, true, func(l *link) error {
				if in.Type == nil || l.body.Type == *in.Type {
					all = append(all, *l)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
		out.TotalCount = len(all)
		all = all[:max(0, len(all)-offset)]
		if len(all) > limit {
			all = all[len(all)-limit:]
		}
		out.Thoughts = make([]Thought, len(all))
		for i := range all {
			out.Thoughts[i] = all[i].thought()
		}
		out.ThoughtCount = len(out.Thoughts)
		if in.VerifyChain != nil && *in.VerifyChain {
			r, err := verifyScope(tx, scope, []byte{chainThought})
			if err != nil {
				return err
			}
			out.ChainValid = &r.ChainValid
			out.InvalidLinks, out.InvalidRecords = []int{}, []string{}
			seenPos, seenID := map[int]bool{}, map[string]bool{}
			for _, b := range r.BrokenLinks {
				if b.Position > 0 && !seenPos[b.Position] {
					seenPos[b.Position] = true
					out.InvalidLinks = append(out.InvalidLinks, b.Position)
				}
				if b.RecordID != "" && !seenID[b.RecordID] {
					seenID[b.RecordID] = true
					out.InvalidRecords = append(out.InvalidRecords, b.RecordID)
				}
			}
		}
		return nil
	})
	if err != nil {
		return ListOutput{}, errs.From(err)
	}
	return out, nil
}

func (l *link) thought() Thought {
	return Thought{
		ThoughtID: l.body.ID, TaskID: taskID(l.task), Type: l.body.Type, Content: l.body.Content,
		Hash: l.hashHex(), PreviousHash: l.body.PreviousHash, RecordedAt: l.body.RecordedAt,
		RecordedBy: l.body.RecordedBy, ChainPosition: l.pos, Branch: l.body.Branch,
		CommitSHA: l.body.CommitSHA, TestsRun: l.body.TestsRun, Blockers: l.body.Blockers,
		Metadata: l.body.Metadata, TraceID: l.body.TraceID,
	}
}

// --- validation helpers ---

func actorOrUnknown(a string) string {
	if a == "" {
		return tasks.UnknownActor
	}
	return a
}

func isOneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

func containsNum(set []uint64, n uint64) bool {
	for _, v := range set {
		if v == n {
			return true
		}
	}
	return false
}

func rangeKeyword(v, lo int) string {
	if v < lo {
		return "minimum"
	}
	return "maximum"
}

func checkTaskID(field, id string) (uint64, error) {
	if id == "" {
		return 0, errs.Invalidf(field, "required", "%s is required: a task id such as \"T-12\"", field)
	}
	n, ok := tasks.ParseTaskID(id)
	if !ok {
		return 0, errs.Invalidf(field, "pattern", "%s %q is not a task id; task ids look like \"T-12\"", field, clip(id))
	}
	return n, nil
}

// checkText enforces UTF-8 and a length range in Unicode code points, the
// unit the task tools use too.
func checkText(field, s string, minLen, maxLen int) error {
	if !utf8.ValidString(s) {
		return errs.Invalidf(field, "utf8", "%s is not valid UTF-8; send text as UTF-8", field)
	}
	n := utf8.RuneCountInString(s)
	if n < minLen {
		return errs.Invalidf(field, "minLength", "%s must not be empty", field)
	}
	if maxLen >= 0 && n > maxLen {
		return errs.Invalidf(field, "maxLength", "%s must have at most %d characters, got %d; shorten it", field, maxLen, n)
	}
	return nil
}

func checkList(field string, items []string) ([]string, error) {
	if len(items) > MaxListItems {
		return nil, errs.Invalidf(field, "maxItems", "%s may hold at most %d items, got %d", field, MaxListItems, len(items))
	}
	for i, it := range items {
		if err := checkText(field+"["+strconv.Itoa(i)+"]", it, 1, MaxListItemLen); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	return append([]string(nil), items...), nil
}

// clip shortens echoed input so a hostile value cannot bloat an error.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
