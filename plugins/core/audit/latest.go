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

// Latest reads, in one read transaction, the last n thought records of
// each task, newest first, by walking its chain backwards from the head:
// its cost follows n and the number of tasks, not the chains' lengths or
// the store's size.
func (s *Service) Latest(taskIDs []string, n int) ([]Latest, error) {
	nums := make([]uint64, len(taskIDs))
	for i, id := range taskIDs {
		num, ok := tasks.ParseTaskID(id)
		if !ok {
			return nil, errs.Invalidf("task_id", "pattern", "task_id %q is not a task id", clip(id))
		}
		nums[i] = num
	}
	var out []Latest
	err := s.st.View(func(tx kv.Tx) error {
		var err error
		out, err = LatestIn(tx, nums, n)
		return err
	})
	if err != nil {
		return nil, errs.From(err)
	}
	return out, nil
}

// LatestIn is Latest inside tx for tasks already parsed to their numbers,
// for a reader that takes several views of the store in one snapshot.
func LatestIn(tx kv.Tx, nums []uint64, n int) ([]Latest, error) {
	out := make([]Latest, len(nums))
	for i, num := range nums {
		var err error
		if out[i], err = latest(tx, num, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// latest is one task's Latest.
func latest(tx kv.Tx, num uint64, n int) (Latest, error) {
	out := Latest{Count: chainLen(tx, num, chainThought)}
	prefix := chainPrefix(num, chainThought)
	c := tx.Bucket([]byte(store.BucketChainLinks)).Cursor()
	// Past the chain's last position: the link before it is the head.
	var k, v []byte
	if k, _ = c.Seek(linkKey(num, chainThought, out.Count+1)); k == nil {
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
			return Latest{}, corrupt(err)
		}
		if len(out.Thoughts) < n {
			out.Thoughts = append(out.Thoughts, l.thought())
		}
		if needBlockers && len(l.body.Blockers) > 0 {
			out.Blockers, needBlockers = l.body.Blockers, false
		}
	}
	return out, nil
}
