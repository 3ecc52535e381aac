package audit

import (
	"encoding/json"
	"strconv"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// ApprovalDecision links a person's approval decision into the task's
// thought trail inside the decision's transaction tx (docs/decisions.md
// D45): a "decision" record by the person, its metadata saying what was
// decided (approve or reject, from → to, reason, via), so the agent reads
// it where it reads every other decision. It is the tasks.Config.Decision
// hook, and returns the record's id and the event to publish once tx
// commits.
func (s *Service) ApprovalDecision(tx kv.Tx, d tasks.DecisionRecord) (string, string, map[string]any, error) {
	body := linkBody{Type: "decision", Content: clipRunes(d.Content, MaxContentLen), RecordedAt: d.At, RecordedBy: actorOrUnknown(d.Actor), TraceID: d.TraceID}
	if body.RecordedAt == "" {
		body.RecordedAt = s.now()
	}
	if d.Metadata != nil {
		raw, err := json.Marshal(d.Metadata)
		if err != nil {
			return "", "", nil, err
		}
		compact, err := trail.Stringify(json.RawMessage(raw))
		if err != nil {
			return "", "", nil, err
		}
		body.Metadata = json.RawMessage(compact)
	}
	if err := store.DrawAhead(tx, store.CounterThought, store.CounterRecord); err != nil {
		return "", "", nil, err
	}
	l, err := appendLink(tx, d.Num, chainThought, body, func(int) (string, error) {
		id, err := store.NextID(tx, store.CounterThought)
		return thoughtIDPrefix + strconv.FormatUint(id, 10), err
	})
	if err != nil {
		return "", "", nil, err
	}
	ev := thoughtEvent(RecordOutput{
		ThoughtID: l.body.ID, TaskID: tasks.FormatTaskID(d.Num), Type: l.body.Type, Hash: l.hashHex(),
		RecordedAt: l.body.RecordedAt, RecordedBy: l.body.RecordedBy, ChainPosition: l.pos,
	})
	if err := s.record(tx, EventThoughtRecorded, ev); err != nil {
		return "", "", nil, err
	}
	return l.body.ID, EventThoughtRecorded, ev, nil
}

// clipRunes keeps s within max characters.
func clipRunes(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max])
	}
	return s
}
