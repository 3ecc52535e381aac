package audit

import (
	"strconv"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/importedtext"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// ImportedText keeps the whole of an imported text that its field could
// not hold (docs/decisions.md D41) in task num's thought trail, inside the
// import's transaction tx: discovery records headed "imported text:
// <field>", each within the content limit, in order, so that reading the
// trail's records of that heading in order gives the text back. It is the
// tasks.Config.ImportedText hook, and returns the events to publish once
// tx commits.
func (s *Service) ImportedText(tx kv.Tx, num uint64, field, text, actor string) (string, []map[string]any, error) {
	parts := splitText(text, MaxContentLen-len(importedtext.PartHeading(field, 999, 999)))
	at := s.now()
	var events []map[string]any
	for i, part := range parts {
		body := linkBody{Type: "discovery", Content: importedtext.PartHeading(field, i+1, len(parts)) + part, RecordedAt: at, RecordedBy: actorOrUnknown(actor)}
		if err := store.DrawAhead(tx, store.CounterThought, store.CounterRecord); err != nil {
			return "", nil, err
		}
		l, err := appendLink(tx, num, chainThought, body, func(int) (string, error) {
			id, err := store.NextID(tx, store.CounterThought)
			return thoughtIDPrefix + strconv.FormatUint(id, 10), err
		})
		if err != nil {
			return "", nil, err
		}
		ev := thoughtEvent(RecordOutput{
			ThoughtID: l.body.ID, TaskID: tasks.FormatTaskID(num), Type: l.body.Type, Hash: l.hashHex(),
			RecordedAt: l.body.RecordedAt, RecordedBy: l.body.RecordedBy, ChainPosition: l.pos,
		})
		if err := s.record(tx, EventThoughtRecorded, ev); err != nil {
			return "", nil, err
		}
		events = append(events, ev)
	}
	return EventThoughtRecorded, events, nil
}

// splitText cuts s into pieces of at most max characters, in order.
func splitText(s string, max int) []string {
	var out []string
	for s != "" {
		i, k := 0, 0
		for ; k < max && i < len(s); k++ {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
