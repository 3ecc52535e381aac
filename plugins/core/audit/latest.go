package audit

import (
	"bytes"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Latest is the tail of a task's thought chain that a resume brief shows
// (docs/decisions.md D39): its last records, newest first, and the
// blockers its latest record listing any still names.
type Latest struct {
	Thoughts []Thought
	Blockers []string
	// Count is the chain's length.
	Count int
}

// latestScan bounds how far back Latest looks for blockers, so a long
// chain costs a resume brief no more than this many links.
const latestScan = 50

// Latest reads the last n thought records of a task, newest first, by
// walking its chain backwards from the head: its cost follows n, not the
// chain's length or the store's size.
func (s *Service) Latest(taskID string, n int) (Latest, error) {
	var out Latest
	num, ok := tasks.ParseTaskID(taskID)
	if !ok {
		return out, errs.Invalidf("task_id", "pattern", "task_id %q is not a task id", clip(taskID))
	}
	err := s.st.View(func(tx kv.Tx) error {
		out.Count = chainLen(tx, num, chainThought)
		prefix := headKey(num, chainThought)
		c := tx.Bucket([]byte(store.BucketChainLinks)).Cursor()
		// Past the chain's last position: the link before it is the head.
		k, v := c.Seek(linkKey(num, chainThought, out.Count+1))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		needBlockers := true
		for seen := 0; k != nil && bytes.HasPrefix(k, prefix) && seen < latestScan; k, v = c.Prev() {
			seen++
			if len(out.Thoughts) >= n && !needBlockers {
				break
			}
			l, err := decodeLink(k, v, true)
			if err != nil {
				return corrupt(err)
			}
			if len(out.Thoughts) < n {
				out.Thoughts = append(out.Thoughts, l.thought())
			}
			if needBlockers && len(l.body.Blockers) > 0 {
				out.Blockers, needBlockers = l.body.Blockers, false
			}
		}
		return nil
	})
	if err != nil {
		return Latest{}, errs.From(err)
	}
	return out, nil
}
