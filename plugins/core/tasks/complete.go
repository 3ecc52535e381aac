package tasks

import (
	"encoding/binary"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// IDMatch is one task offered for a typed task id.
type IDMatch struct {
	TaskID string
	Title  string
}

// CompleteID offers the tasks a client may mean by typed, for MCP argument
// completion: ids that start with it ("T-1" offers T-1, T-12, T-103) and
// tasks whose title has a word starting with it ("auth" offers the task
// "Fix auth timeout"), id matches first, each group in id order, at most
// limit in all. Empty typed offers the newest tasks.
func (s *Service) CompleteID(typed string, limit int) ([]IDMatch, error) {
	typed = strings.ToLower(strings.TrimSpace(typed))
	var byID, byTitle []IDMatch
	err := s.st.View(func(tx kv.Tx) error {
		var raw rawRecord
		c := tasksBucket(tx).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			num := binary.BigEndian.Uint64(k)
			if err := decodeRaw(num, v, &raw); err != nil {
				return err
			}
			id := FormatTaskID(num)
			m := IDMatch{TaskID: id, Title: string(raw.title)}
			switch {
			case typed == "" || strings.HasPrefix(strings.ToLower(id), typed):
				byID = append(byID, m)
			case titleWordHasPrefix(string(raw.title), typed):
				byTitle = append(byTitle, m)
			}
			if len(byID) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := append(byID, byTitle...)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// titleWordHasPrefix reports whether a word of title starts with prefix
// (lower case).
func titleWordHasPrefix(title, prefix string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}
