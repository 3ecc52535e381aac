package audit

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// CompleteSessionID offers audit session ids starting with typed, newest
// first, at most limit; finalizedOnly keeps the sessions that have a proof
// (merkle_finalize ran).
func (s *Service) CompleteSessionID(typed string, finalizedOnly bool, limit int) ([]string, error) {
	typed = strings.ToUpper(strings.TrimSpace(typed))
	var out []string
	err := s.st.View(func(tx kv.Tx) error {
		c := tx.Bucket([]byte(store.BucketAuditSessions)).Cursor()
		for k, _ := c.Last(); k != nil && len(out) < limit; k, _ = c.Prev() {
			id := sessionIDPrefix + strconv.FormatUint(binary.BigEndian.Uint64(k), 10)
			if !strings.HasPrefix(id, typed) {
				continue
			}
			if finalizedOnly {
				sess, err := loadSession(tx, "session_id", id, "")
				if err != nil || sess.Frozen == nil {
					continue
				}
			}
			out = append(out, id)
		}
		return nil
	})
	return out, err
}
