package tasks

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ImportBatch is how many tasks one transaction of an import writes: big
// enough that the fsync and the tree's page splits are paid once for many
// tasks, small enough that bbolt's nodes stay small (it splits them only
// at commit) and that other writers wait for one batch, not the import.
const ImportBatch = 1000

// ImportOutput is what an import answers.
type ImportOutput struct {
	Project string `json:"project"`
	// Projects are the other projects the import wrote to: those of a
	// task-master file's tags.
	Projects []string `json:"projects,omitempty"`
	Imported int      `json:"imported"`
	// IDs maps each task's id in its source to the task id it got, when
	// the caller asked for it in the answer.
	IDs map[string]string `json:"ids,omitempty"`
	// Transactions is how many write transactions the import took.
	Transactions int `json:"transactions"`
	// DryRun says nothing was written: the answer is what the import
	// would do.
	DryRun bool `json:"dry_run,omitempty"`
	// Report lists each task the import changed or skipped, at most
	// MaxImportReport of them (ReportLeftOut counts the others); Changes
	// and Skipped count them.
	Report        []ImportChange `json:"report"`
	Changes       int            `json:"changes"`
	Skipped       int            `json:"skipped"`
	ReportLeftOut int            `json:"report_left_out,omitempty"`
}

// importHead is the journal's head: what the import is and how far it is.
type importHead struct {
	// ID tells one import's journal from another's.
	ID      string `json:"id,omitempty"`
	Project string `json:"project"`
	Actor   string `json:"actor"`
	Total   int    `json:"total"`
	Batch   int    `json:"batch"`
	// Next is the plan position of the next task to write.
	Next int `json:"next"`
	// Format is how the plan is kept: journalPerTask, or (0) the chunks
	// of ImportBatch tasks an older cairn wrote.
	Format int `json:"format,omitempty"`
	// Staging is true until every task's plan is in the journal; Touched
	// is when staging last made progress.
	Staging bool   `json:"staging,omitempty"`
	Touched string `json:"touched,omitempty"`
}

// journalPerTask keeps each task's plan under its own key ('t' and its
// plan position), written in input order as the input is read a second
// time.
const journalPerTask = 2

var (
	bucketJournal = []byte(store.BucketImportJournal)
	journalHead   = []byte("head")
)

// journalKey names chunk n of the plan ('p', an older cairn's), the plan of
// the task at position n ('t'), or chunk n of the task numbers made ('n').
func journalKey(kind byte, n int) []byte {
	return binary.BigEndian.AppendUint64([]byte{kind}, uint64(n))
}

func putHead(j kv.Bucket, h importHead) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return j.Put(journalHead, raw)
}

// readHead is the journal's head, nil when no import is journaled.
func readHead(j kv.Bucket) (*importHead, error) {
	if !j.Exists() {
		return nil, nil
	}
	raw := j.Get(journalHead)
	if raw == nil {
		return nil, nil
	}
	var h importHead
	if err := json.Unmarshal(raw, &h); err != nil || h.Batch <= 0 {
		return nil, fmt.Errorf("tasks: import journal head unreadable: %v", err)
	}
	return &h, nil
}

// loadBatch reads the plan of positions [lo, hi) from the journal.
func loadBatch(j kv.Bucket, head importHead, lo, hi int) ([]planned, error) {
	if head.Format != journalPerTask {
		var chunk []planned
		if err := json.Unmarshal(j.Get(journalKey('p', lo/head.Batch)), &chunk); err != nil || len(chunk) != hi-lo {
			return nil, fmt.Errorf("tasks: import journal chunk %d unreadable (%d tasks): %v", lo/head.Batch, len(chunk), err)
		}
		return chunk, nil
	}
	out := make([]planned, hi-lo)
	for i := range out {
		raw := j.Get(journalKey('t', lo+i))
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("tasks: import journal task %d unreadable: %v", lo+i, err)
		}
	}
	return out, nil
}

// dropBatch removes the plan of positions [lo, hi) from the journal.
func dropBatch(j kv.Bucket, head importHead, lo, hi int) error {
	if head.Format != journalPerTask {
		return j.Delete(journalKey('p', lo/head.Batch))
	}
	for i := lo; i < hi; i++ {
		if err := j.Delete(journalKey('t', i)); err != nil {
			return err
		}
	}
	return nil
}

// runImport writes the journaled plan from head.Next on, one batch a
// transaction, reading each batch's plan from the journal in the
// transaction that writes it; nums holds the numbers of the tasks already
// made (a resumed import's). It returns every task's number and the
// transactions it took.
func (s *Service) runImport(head importHead, nums []uint64) ([]uint64, int, error) {
	txs := 0
	for head.Next < head.Total {
		lo, hi := head.Next, min(head.Next+head.Batch, head.Total)
		var events []pending
		// all grows from nums by this batch's numbers; nums itself is
		// extended only once the batch has committed.
		all := nums
		err := s.st.UpdateLarge(func(tx kv.Tx) error {
			events, all = events[:0], nums
			releaseMapped(s.st.DB())
			j := tx.Bucket(bucketJournal)
			if err := sameImport(j, head); err != nil {
				return err
			}
			plan, err := loadBatch(j, head, lo, hi)
			if err != nil {
				return err
			}
			now := s.now()
			for i := range plan {
				num, evs, err := s.importOne(tx, head.Actor, &plan[i], all, now)
				if err != nil {
					return importer.At(importer.Where{File: "task " + plan[i].Key}, err)
				}
				all = append(all, num)
				events = append(events, evs...)
			}
			if hi == head.Total {
				return tx.Clear(bucketJournal)
			}
			if err := dropBatch(j, head, lo, hi); err != nil {
				return err
			}
			if err := j.Put(journalKey('n', lo/head.Batch), packNums(all[lo:])); err != nil {
				return err
			}
			next := head
			next.Next = hi
			return putHead(j, next)
		})
		if err != nil {
			e := errs.From(err).With("imported", lo)
			e.Message += fmt.Sprintf(" (%d of %d tasks are written; the import journal holds the rest, and the core area completes the import when it next opens the store)", lo, head.Total)
			return nil, txs, e
		}
		txs++
		nums = all
		head.Next = hi
		s.publishAll(events)
	}
	s.flushImported()
	return nums, txs, nil
}

// flushImported writes the search postings and list index entries the
// import's tasks left pending (searchpending.go), after its last batch
// rather than between them, where the flusher would contend for the
// writer's lock, and before it answers rather than in the background or
// when the store next closes or opens: an import of a million tasks leaves
// minutes of it, which then ran with none of the import's memory bounds
// and made the next start wait (docs/decisions.md D41). After each
// transaction the store's mapped pages it read are dropped. Should it
// fail, the tasks stay pending and the background flusher retries.
func (s *Service) flushImported() {
	release := func(int) {
		_ = s.st.View(func(kv.Tx) error {
			// A read transaction holds bbolt's mapping in place.
			releaseMapped(s.st.DB())
			return nil
		})
	}
	if err := s.flushEvery(bulkFlushBatch, release); err != nil {
		s.deferred()
	}
}

// importOne makes one planned task as task_create would, then applies its
// task_update steps; nums are the numbers of the plan's earlier tasks.
func (s *Service) importOne(tx kv.Tx, actor string, p *planned, nums []uint64, now time.Time) (uint64, []pending, error) {
	in := p.In
	var parent uint64
	if p.Parent >= 0 {
		parent = nums[p.Parent]
		id := FormatTaskID(parent)
		in.ParentID = &id
	}
	deps := make([]uint64, len(p.Deps))
	for k, d := range p.Deps {
		deps[k] = nums[d]
	}
	in.DependsOn = taskIDs(deps)
	rec, event, err := s.createRecorded(tx, actor, "", &in, p.Source, parent, deps, now)
	if err != nil {
		return 0, nil, err
	}
	events := []pending{{EventCreated, event}}
	for _, t := range p.Texts {
		if s.cfg.ImportedText == nil {
			return 0, nil, fmt.Errorf("tasks: the import journal keeps a whole text for task %s's trail, but no trail is wired", rec.id())
		}
		typ, evs, err := s.cfg.ImportedText(tx, rec.num, t.Field, t.Text, actor)
		if err != nil {
			return 0, nil, err
		}
		for _, e := range evs {
			events = append(events, pending{typ, e})
		}
	}
	for _, st := range p.Steps {
		st.TaskID = rec.id()
		_, evs, err := s.updateTx(tx, actor, "", &st, rec.num, nil, now)
		if err != nil {
			return 0, nil, err
		}
		events = append(events, evs...)
	}
	return rec.num, events, nil
}

func packNums(nums []uint64) []byte {
	b := make([]byte, 0, 8*len(nums))
	for _, n := range nums {
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return b
}

// ResumeImport completes an import a crash interrupted, from the journal;
// New calls it on every open. It reports how many tasks it wrote (0: there
// was nothing to complete). A journal still being staged belongs to an
// import that never started: it is cleared (on a store shared by several
// servers, only once its staging has stalled, importStagingStale).
func (s *Service) ResumeImport() (int, error) {
	var (
		head    *importHead
		nums    []uint64
		abandon bool
	)
	err := s.st.View(func(tx kv.Tx) error {
		j := tx.Bucket(bucketJournal)
		var err error
		if head, err = readHead(j); err != nil || head == nil {
			return err
		}
		if head.Staging {
			abandon = !tx.Shared() || s.stagingStale(*head)
			return nil
		}
		for n := 0; n*head.Batch < head.Next; n++ {
			b := j.Get(journalKey('n', n))
			for k := 0; k+8 <= len(b); k += 8 {
				nums = append(nums, binary.BigEndian.Uint64(b[k:]))
			}
		}
		if len(nums) != head.Next {
			return fmt.Errorf("tasks: import journal holds %d task numbers, expected %d", len(nums), head.Next)
		}
		return nil
	})
	if err != nil || head == nil {
		return 0, internal(err)
	}
	if head.Staging {
		if abandon {
			s.abandonStaging(head.ID)
		}
		return 0, nil
	}
	done := head.Next
	_, _, err = s.runImport(*head, nums)
	return head.Total - done, err
}
