package sdk

import (
	"sort"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// maxOwnerTasks bounds the task records one caller holds in a plugin,
// working or ended: a task that ends at once would otherwise leave a record
// for up to MaxTaskTTL however many a client starts (docs/decisions.md
// D42).
const maxOwnerTasks = 16

// makeRoomLocked lets owner start one more task: when owner holds
// maxOwnerTasks records, its oldest ended ones are dropped first; when
// every record is of a task still working (or a cancelled one whose
// handler is still stopping), the new task is refused. Expired records
// met on the way are removed. b.mu is held.
func (b *tasks) makeRoomLocked(owner string) *errs.Error {
	recs, err := b.files.all(b.skipCorrupt)
	if err != nil {
		return errs.Newf(500, errs.Internal, "the tasks cannot be read: %v", err)
	}
	now := b.now()
	held := 0
	var droppable []*taskRecord
	for _, r := range recs {
		switch {
		case r.expired(now):
			b.files.remove(b.plugin, r.ID)
		case r.Owner != owner:
		default:
			held++
			if _, running := b.running[r.ID]; r.terminal() && !running {
				droppable = append(droppable, r)
			}
		}
	}
	drop := held - maxOwnerTasks + 1
	if drop <= 0 {
		return nil
	}
	if drop > len(droppable) {
		return errs.Newf(429, errs.RateLimited, "%d tasks of yours are already working in plugin %s, the most it runs for one caller; wait for one to end or cancel one", held-len(droppable), b.plugin).
			With("field", "task").With("constraint", "maxWorking")
	}
	sort.Slice(droppable, func(i, j int) bool {
		if !droppable[i].CreatedAt.Equal(droppable[j].CreatedAt) {
			return droppable[i].CreatedAt.Before(droppable[j].CreatedAt)
		}
		return droppable[i].ID < droppable[j].ID
	})
	for _, r := range droppable[:drop] {
		b.files.remove(b.plugin, r.ID)
	}
	b.log.Debug("oldest ended task records dropped to keep a caller's records capped", "owner", owner, "dropped", drop, "cap", maxOwnerTasks)
	return nil
}
