package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// importStagingStale is how long a journal still being staged may go
// without progress before another import, or a server opening a shared
// store, takes it for abandoned by a server that died and clears it. A
// live import stages a batch every few seconds.
const importStagingStale = 10 * time.Minute

// stageImport reads src a second time and writes each task's checked
// input to the import journal under its plan position, ImportBatch tasks
// a transaction, so that neither this process nor one transaction ever
// holds the input whole (docs/decisions.md D41). The first transaction
// claims the journal (no other import may run) and the last marks it
// staged: from then on the import always completes, here or, after a
// crash, when the store is next opened. An input that reads differently
// the second time is refused and its journal cleared: nothing is written.
// Each task keeps its origin in format, and its texts longer than their
// fields, which its trail keeps. It returns the journal's head and the
// transactions it took.
func (s *Service) stageImport(call Call, project string, plan *importPlan, src importer.Source, format string) (importHead, int, error) {
	head := importHead{ID: newImportID(), Project: project, Actor: actorOrUnknown(call.Actor), Total: len(plan.keys), Batch: ImportBatch, Format: journalPerTask, Staging: true}
	type entry struct {
		pos int32
		raw []byte
	}
	batch := make([]entry, 0, ImportBatch)
	txs, read := 0, int32(0)
	flush := func(last bool) error {
		err := s.st.UpdateLarge(func(tx kv.Tx) error {
			releaseMapped(s.st.DB())
			j := tx.Bucket(bucketJournal)
			if txs == 0 {
				if err := s.claimJournal(tx); err != nil {
					return err
				}
				if err := s.projectForWrite(tx, project, call); err != nil {
					return err
				}
				// A project a task names (a task-master tag's) is
				// registered as the caller's own would be.
				for _, slug := range plan.projects {
					if err := s.projectForWrite(tx, slug, Call{Project: slug}); err != nil {
						return err
					}
				}
				j = tx.Bucket(bucketJournal)
			} else if err := sameImport(j, head); err != nil {
				return err
			}
			for _, e := range batch {
				if err := j.Put(journalKey('t', int(e.pos)), e.raw); err != nil {
					return err
				}
			}
			next := head
			next.Staging = !last
			next.Touched = s.now().Format(time.RFC3339Nano)
			return putHead(j, next)
		})
		if err != nil {
			return internal(err)
		}
		txs++
		batch = batch[:0]
		return nil
	}
	seen, skip := int32(0), 0
	err := src.Scan(func(t importer.Task) error {
		r := seen
		seen++
		if skip < len(plan.skipped) && plan.skipped[skip] == r {
			skip++ // checked and reported by the first pass
			return nil
		}
		if t.Skip != nil { // one the first pass read
			return changedInput(t.Where)
		}
		i := read
		read++
		if int(i) >= len(plan.keys) {
			return changedInput(t.Where)
		}
		key := plan.keys[i]
		if orig, ok := plan.renamed[i]; ok {
			if t.Key != orig {
				return changedInput(t.Where)
			}
			// The renumbered task's origin tells it from the first one.
			if t.Source == orig || t.Source == "" {
				t.Source = key
			} else {
				t.Source += strings.TrimPrefix(key, orig)
			}
			t.Key = key
		} else if t.Key != key {
			return changedInput(t.Where)
		}
		var texts []importedText
		if plan.cuts {
			texts = cutLong(&t)
		}
		if plan.projectIndex(project, t.Project) != plan.projectOf(i) {
			return changedInput(t.Where)
		}
		in, steps, deps, err := checkTask(project, &t)
		if err != nil {
			return importer.At(t.Where, err)
		}
		p := planned{In: in, Parent: -1, Steps: steps, Key: t.Key, Source: origin(&t, format), Texts: texts}
		if j := plan.parent[i]; j >= 0 {
			if t.Parent != plan.keys[j] {
				return changedInput(t.Where)
			}
			p.Parent = int(plan.pos[j])
		} else if t.Parent != "" && !plan.noParent[i] {
			return changedInput(t.Where)
		}
		// The dependencies kept are those read, less the ones the first
		// pass dropped, in the same order.
		kept := plan.deps[plan.depAt[i]:plan.depAt[i+1]]
		if len(deps) != len(kept)+int(plan.droppedOf[i]) {
			return changedInput(t.Where)
		}
		k := 0
		for _, d := range deps {
			if k < len(kept) && d == plan.keys[kept[k]] {
				p.Deps = append(p.Deps, int(plan.pos[kept[k]]))
				k++
			}
		}
		if k != len(kept) {
			return changedInput(t.Where)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return err
		}
		batch = append(batch, entry{plan.pos[i], raw})
		if len(batch) == ImportBatch && int(read) < len(plan.keys) {
			return flush(false)
		}
		return nil
	})
	if err == nil && int(read) != len(plan.keys) {
		err = changedInput(importer.Where{File: plan.where.at(0).File})
	}
	if err == nil {
		err = flush(true)
	}
	if err != nil {
		if txs > 0 {
			s.abandonStaging(head.ID)
		}
		return importHead{}, 0, err
	}
	head.Staging = false
	return head, txs, nil
}

// claimJournal makes sure no other import holds the journal; one whose
// staging stopped long ago is cleared (importStagingStale).
func (s *Service) claimJournal(tx kv.Tx) error {
	cur, err := readHead(tx.Bucket(bucketJournal))
	if err != nil || cur == nil {
		return err
	}
	if cur.Staging && s.stagingStale(*cur) {
		return tx.Clear(bucketJournal)
	}
	return errs.Conflictf(errs.Conflict, "another import into this store is under way; run this one when it has finished").With("field", "tasks")
}

// stagingStale reports whether a journal being staged has made no
// progress for importStagingStale.
func (s *Service) stagingStale(h importHead) bool {
	at, err := time.Parse(time.RFC3339Nano, h.Touched)
	return err != nil || s.now().Sub(at) > importStagingStale
}

// abandonStaging clears the journal of the import id, which was refused
// while being staged; no task of it was written. Should this fail, the
// journal is cleared when the store is next opened or after
// importStagingStale.
func (s *Service) abandonStaging(id string) {
	_ = s.st.Update(func(tx kv.Tx) error {
		cur, err := readHead(tx.Bucket(bucketJournal))
		if err != nil || cur == nil || cur.ID != id || !cur.Staging {
			return err
		}
		return tx.Clear(bucketJournal)
	})
}

// sameImport checks that the journal is still import head's, at the same
// point: another server completing it, or a takeover of a stale staging,
// stops this one rather than writing a batch twice.
func sameImport(j kv.Bucket, head importHead) error {
	cur, err := readHead(j)
	if err != nil {
		return err
	}
	if cur == nil || cur.ID != head.ID || cur.Next != head.Next || cur.Staging != head.Staging {
		return errs.Conflictf(errs.Conflict, "the import journal moved on without this import: another server completes it, or it was cleared as abandoned").With("field", "tasks")
	}
	return nil
}

// changedInput refuses an input that read differently the second time.
func changedInput(w importer.Where) error {
	return importer.Refuse(w, "path", "stable", "the input changed while it was being imported; nothing was imported: run the import again")
}

func newImportID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// origin is where t came from: its id in its source (its key when the
// reader names none) in format, and its times there; nil for tasks of no
// format (held in memory, Import), which are made exactly as task_create
// makes them.
func origin(t *importer.Task, format string) *Origin {
	if format == "" {
		return nil
	}
	id := t.Source
	if id == "" {
		id = t.Key
	}
	return &Origin{ID: id, Format: format, CreatedAt: t.SourceCreated, UpdatedAt: t.SourceUpdated}
}
