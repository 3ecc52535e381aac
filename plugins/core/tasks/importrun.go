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
	Project  string `json:"project"`
	Imported int    `json:"imported"`
	// IDs maps each task's id in its source to the task id it got.
	IDs map[string]string `json:"ids"`
	// Transactions is how many write transactions the import took.
	Transactions int `json:"transactions"`
}

// importHead is the journal's head: what the import is and how far it is.
type importHead struct {
	Project string `json:"project"`
	Actor   string `json:"actor"`
	Total   int    `json:"total"`
	Batch   int    `json:"batch"`
	// Next is the plan position of the next task to write.
	Next int `json:"next"`
}

var (
	bucketJournal = []byte(store.BucketImportJournal)
	journalHead   = []byte("head")
)

// journalKey names chunk n of the plan ('p') or of the task numbers made
// ('n').
func journalKey(kind byte, n int) []byte {
	return binary.BigEndian.AppendUint64([]byte{kind}, uint64(n))
}

// Import imports tasks into project for call: all of them or, on any
// problem, none (docs/decisions.md D41). The input is checked whole before
// the first write. Then the first transaction writes the validated plan to
// the store's import journal, and each later one writes ImportBatch tasks
// and notes its progress in the journal; the last removes the journal. A
// crash in between leaves the journal, and the next open of the store
// completes the import from it (ResumeImport), so an import that started
// always finishes and one refused never starts.
func (s *Service) Import(call Call, project string, in []importer.Task) (ImportOutput, error) {
	plan, err := planImport(project, in)
	if err != nil {
		return ImportOutput{}, err
	}
	head := importHead{Project: project, Actor: actorOrUnknown(call.Actor), Total: len(plan), Batch: ImportBatch}
	err = s.st.Update(func(tx kv.Tx) error {
		j := tx.Bucket(bucketJournal)
		if j.Get(journalHead) != nil {
			return errs.Conflictf(errs.Conflict, "another import into this store is under way; run this one when it has finished").With("field", "tasks")
		}
		if err := s.projectForWrite(tx, project, call); err != nil {
			return err
		}
		for lo, n := 0, 0; lo < len(plan); lo, n = lo+ImportBatch, n+1 {
			raw, err := json.Marshal(plan[lo:min(lo+ImportBatch, len(plan))])
			if err != nil {
				return err
			}
			if err := j.Put(journalKey('p', n), raw); err != nil {
				return err
			}
		}
		return putHead(j, head)
	})
	if err != nil {
		return ImportOutput{}, internal(err)
	}
	nums, txs, err := s.runImport(head, plan, nil)
	if err != nil {
		return ImportOutput{}, err
	}
	out := ImportOutput{Project: project, Imported: len(plan), IDs: make(map[string]string, len(plan)), Transactions: 1 + txs}
	for i, p := range plan {
		out.IDs[p.Key] = FormatTaskID(nums[i])
	}
	return out, nil
}

func putHead(j kv.Bucket, h importHead) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return j.Put(journalHead, raw)
}

// runImport writes the plan from head.Next on, one batch a transaction;
// nums holds the numbers of the tasks already made (a resumed import's).
// It returns every task's number and the transactions it took.
func (s *Service) runImport(head importHead, plan []planned, nums []uint64) ([]uint64, int, error) {
	txs := 0
	for head.Next < head.Total {
		lo, hi := head.Next, min(head.Next+head.Batch, head.Total)
		var events []pending
		// all grows from nums by this batch's numbers; nums itself is
		// extended only once the batch has committed.
		all := nums
		err := s.st.Update(func(tx kv.Tx) error {
			events, all = events[:0], nums
			now := s.now()
			for i := lo; i < hi; i++ {
				num, evs, err := s.importOne(tx, head.Actor, &plan[i], all, now)
				if err != nil {
					return importer.At(importer.Where{File: "task " + plan[i].Key}, err)
				}
				all = append(all, num)
				events = append(events, evs...)
			}
			j := tx.Bucket(bucketJournal)
			next := head
			next.Next = hi
			if hi == head.Total {
				return clearJournal(j, head)
			}
			if err := j.Delete(journalKey('p', lo/head.Batch)); err != nil {
				return err
			}
			if err := j.Put(journalKey('n', lo/head.Batch), packNums(all[lo:])); err != nil {
				return err
			}
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
	// The search postings of the imported tasks are written after the
	// import, as after any write (searchpending.go), rather than between
	// its batches, where the flusher would contend for the writer's lock.
	s.deferred()
	return nums, txs, nil
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
	rec, event, err := s.createRecorded(tx, actor, "", &in, parent, deps, now)
	if err != nil {
		return 0, nil, err
	}
	events := []pending{{EventCreated, event}}
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

// clearJournal removes every key of a finished import's journal.
func clearJournal(j kv.Bucket, head importHead) error {
	for n := 0; n*head.Batch < head.Total; n++ {
		if err := j.Delete(journalKey('p', n)); err != nil {
			return err
		}
		if err := j.Delete(journalKey('n', n)); err != nil {
			return err
		}
	}
	return j.Delete(journalHead)
}

// ResumeImport completes an import a crash interrupted, from the journal
// its first transaction wrote; New calls it on every open. It reports how
// many tasks it wrote (0: there was nothing to complete).
func (s *Service) ResumeImport() (int, error) {
	var (
		head importHead
		plan []planned
		nums []uint64
	)
	err := s.st.View(func(tx kv.Tx) error {
		j := tx.Bucket(bucketJournal)
		if !j.Exists() {
			return nil
		}
		raw := j.Get(journalHead)
		if raw == nil {
			return nil
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Batch <= 0 {
			return fmt.Errorf("tasks: import journal head unreadable: %v", err)
		}
		plan = make([]planned, head.Total)
		for n := 0; n*head.Batch < head.Total; n++ {
			lo := n * head.Batch
			if lo < head.Next {
				b := j.Get(journalKey('n', n))
				for k := 0; k+8 <= len(b); k += 8 {
					nums = append(nums, binary.BigEndian.Uint64(b[k:]))
				}
				continue
			}
			var chunk []planned
			if err := json.Unmarshal(j.Get(journalKey('p', n)), &chunk); err != nil {
				return fmt.Errorf("tasks: import journal chunk %d unreadable: %v", n, err)
			}
			copy(plan[lo:], chunk)
		}
		if len(nums) != head.Next {
			return fmt.Errorf("tasks: import journal holds %d task numbers, expected %d", len(nums), head.Next)
		}
		return nil
	})
	if err != nil || head.Total == 0 {
		return 0, internal(err)
	}
	done := head.Next
	_, _, err = s.runImport(head, plan, nums)
	return head.Total - done, err
}
