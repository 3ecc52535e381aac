package tasks

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// ExportedTask is one line of `cairn export tasks`: what task_get answers,
// with the task's sequence, so an export read back by an import names its
// parents and dependencies by task_id (docs/decisions.md D41).
type ExportedTask struct {
	Task
	Sequence uint64 `json:"sequence"`
}

// Export writes every task of project to w as JSON Lines, in task number
// order, from one read transaction, and says how many it wrote.
func (s *Service) Export(project string, w io.Writer) (int, error) {
	if err := checkSlug("project", project); err != nil {
		return 0, err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := ViewSettled(s.st, func(tx kv.Tx) error {
		if !projectExists(tx, project) {
			return projectNotFound(project)
		}
		prefix := append([]byte(project), 0)
		c := tx.Bucket([]byte(store.BucketTasksByProject)).Cursor()
		for k, _ := c.Seek(prefix); len(k) == len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			num := binary.BigEndian.Uint64(k[len(prefix):])
			rec, ok, err := loadRecord(tx, num)
			if err != nil || !ok {
				return err
			}
			t := ExportedTask{Task: rec.view(), Sequence: rec.seq}
			t.DependsOn = taskIDs(depsOf(tx, num))
			t.ClaimedBy = claimHolder(tx, num)
			if err := enc.Encode(t); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, internal(err)
	}
	return n, internal(bw.Flush())
}
