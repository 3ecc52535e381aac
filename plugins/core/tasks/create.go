package tasks

import (
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// CreateInput is the input of task_create. Pointer fields are optional:
// nil means "absent", which differs from a zero value.
type CreateInput struct {
	Title         string   `json:"title"`
	Description   *string  `json:"description,omitempty"`
	Project       string   `json:"project"`
	ParentID      *string  `json:"parent_id,omitempty"`
	Priority      *string  `json:"priority,omitempty"`
	Labels        []string `json:"labels,omitempty"`
	Assignee      *string  `json:"assignee,omitempty"`
	EstimateHours *float64 `json:"estimate_hours,omitempty"`
	// DependsOn lists tasks of the same project this one waits on (D27).
	DependsOn []string `json:"depends_on,omitempty"`
}

// CreateOutput is the output of task_create.
type CreateOutput struct {
	TaskID    string `json:"task_id"`
	Status    string `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	CreatedAt string `json:"created_at"`
	CreatedBy string `json:"created_by"`
	Sequence  uint64 `json:"sequence"`
}

// validate checks everything that needs no store access, in field order, so
// the first reported error is stable.
func (in *CreateInput) validate() (parent uint64, deps []uint64, err error) {
	parent, err = in.validateFields()
	if err != nil {
		return 0, nil, err
	}
	deps, err = checkDependsOn(in.DependsOn)
	return parent, deps, err
}

func (in *CreateInput) validateFields() (parent uint64, err error) {
	if err := checkTitle(in.Title); err != nil {
		return 0, err
	}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return 0, err
		}
	}
	if err := checkSlug("project", in.Project); err != nil {
		return 0, err
	}
	if in.ParentID != nil {
		if parent, err = checkTaskID("parent_id", *in.ParentID); err != nil {
			return 0, err
		}
	}
	if in.Priority != nil {
		if err := checkPriority("priority", *in.Priority); err != nil {
			return 0, err
		}
	}
	if err := checkLabels(in.Labels); err != nil {
		return 0, err
	}
	if in.Assignee != nil {
		if err := checkUTF8("assignee", *in.Assignee); err != nil {
			return 0, err
		}
	}
	if in.EstimateHours != nil {
		if err := checkRange("estimate_hours", *in.EstimateHours, 0, MaxEstimateHours); err != nil {
			return 0, err
		}
	}
	return parent, nil
}

// Create runs task_create for actor; see CreateFor.
func (s *Service) Create(actor string, in CreateInput) (CreateOutput, error) {
	return s.CreateFor(Call{Actor: actor}, in)
}

// CreateFor runs task_create: a new task in backlog, numbered from the
// store's task counter and the project's sequence, in one transaction
// shared (group commit) with concurrent writes.
func (s *Service) CreateFor(call Call, in CreateInput) (CreateOutput, error) {
	parent, deps, err := in.validate()
	if err != nil {
		return CreateOutput{}, err
	}
	actor := actorOrUnknown(call.Actor)
	now := s.now()
	var (
		out      CreateOutput
		replayed bool
		rec      *record
		event    map[string]any
	)
	// What the write will count in (countKeysOf): its project, assignee
	// and labels.
	counted := &record{project: in.Project, assignee: DefaultAssignee, labels: in.Labels}
	if in.Assignee != nil && *in.Assignee != "" {
		counted.assignee = *in.Assignee
	}
	err = s.st.CommitShared(func(tx kv.Tx) error {
		if tx.Shared() {
			tx.Prefetch(store.OnceKeys(call.Idem, append(countKeysOf(tx, counted),
				kv.Key{Bucket: []byte(store.BucketProjects), Key: []byte(in.Project)},
				kv.Key{Bucket: []byte(store.BucketMeta), Key: metaListIndexUpto})...)...)
		}
		var err error
		out, replayed, err = store.Once(tx, call.Idem, now, func() (CreateOutput, error) {
			if err := s.projectForWrite(tx, in.Project, call); err != nil {
				return CreateOutput{}, err
			}
			var err error
			if rec, event, err = s.createRecorded(tx, actor, call.TraceID, &in, nil, parent, deps, now); err != nil {
				return CreateOutput{}, err
			}
			return CreateOutput{
				TaskID:    rec.id(),
				Status:    statusName(rec.status),
				CreatedAt: formatMillis(rec.createdMs),
				CreatedBy: rec.createdBy,
				Sequence:  rec.seq,
			}, nil
		})
		return err
	})
	if err != nil {
		return CreateOutput{}, internal(err)
	}
	if !replayed {
		s.deferred()
		s.publish(EventCreated, event)
	}
	return out, nil
}

// createdEvent is the task.created event's data.
func createdEvent(rec *record) map[string]any {
	return map[string]any{
		"task_id":    rec.id(),
		"project":    rec.project,
		"title":      rec.title,
		"status":     statusName(rec.status),
		"priority":   priorityName(rec.priority),
		"created_by": rec.createdBy,
	}
}

// createRecorded writes a validated new task into a project that takes
// tasks (projectForWrite) inside tx, and records its task.created event:
// task_create's write, which an import repeats for each of its tasks
// (docs/decisions.md D41). It returns the event to publish after the commit.
func (s *Service) createRecorded(tx kv.Tx, actor, traceID string, in *CreateInput, origin *Origin, parent uint64, deps []uint64, now time.Time) (*record, map[string]any, error) {
	rec, err := s.createWith(tx, actor, traceID, in, origin, parent, deps, now)
	if err != nil {
		return nil, nil, err
	}
	event := createdEvent(rec)
	if err := s.record(tx, EventCreated, event, now); err != nil {
		return nil, nil, err
	}
	return rec, event, nil
}

// createTx writes a validated new task inside tx; traceID is the trace of
// the call that writes it (docs/decisions.md D38), kept beside its chain
// link.
func (s *Service) createTx(tx kv.Tx, actor, traceID string, in *CreateInput, parent uint64, deps []uint64, now time.Time) (*record, error) {
	return s.createWith(tx, actor, traceID, in, nil, parent, deps, now)
}

// createWith is createTx for a task that keeps its origin, an imported
// one's source (docs/decisions.md D41); nil for a task made here.
func (s *Service) createWith(tx kv.Tx, actor, traceID string, in *CreateInput, origin *Origin, parent uint64, deps []uint64, now time.Time) (*record, error) {
	if parent != 0 {
		p, ok, err := loadRecord(tx, parent)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, taskNotFound("parent_id", *in.ParentID)
		}
		if p.project != in.Project {
			return nil, errs.Invalidf("parent_id", "same_project", "parent task %s belongs to project %q, not %q; a sub-task must be in its parent's project", p.id(), p.project, in.Project)
		}
	}
	codes, err := loadDeps(tx, in.Project, deps)
	if err != nil {
		return nil, err
	}
	num, seq, err := store.NextTaskNumbers(tx, in.Project, s.cfg.OnChange != nil)
	if err != nil {
		return nil, err
	}
	// Nothing is stored under a number just drawn: its entries need not
	// be looked up (a round trip each on PostgreSQL).
	for _, b := range []string{store.BucketTasks, store.BucketTaskTrigramPending, store.BucketTaskReadyOf} {
		tx.Bucket([]byte(b)).Fresh(store.U64(num))
	}
	ms := now.UnixMilli()
	rec := &record{
		num:       num,
		project:   in.Project,
		parent:    parent,
		status:    statusCode(StatusBacklog),
		priority:  priorityCode(PriorityNormal),
		assignee:  DefaultAssignee,
		labels:    append([]string{}, in.Labels...),
		createdMs: ms,
		updatedMs: ms,
		createdBy: actor,
		updatedBy: actor,
		seq:       seq,
		title:     in.Title,
	}
	if in.Description != nil {
		rec.description = *in.Description
	}
	if origin != nil {
		rec.origin = *origin
	}
	if in.Priority != nil {
		rec.priority = priorityCode(*in.Priority)
	}
	if in.Assignee != nil && *in.Assignee != "" {
		rec.assignee = *in.Assignee
	}
	if in.EstimateHours != nil {
		rec.hasEstimate, rec.estimate = true, *in.EstimateHours
	}
	if _, err := putRecord(tx, rec, nil); err != nil {
		return nil, err
	}
	if err := addDeps(tx, num, deps, codes); err != nil {
		return nil, err
	}
	if s.cfg.OnChange != nil {
		data := rec.view().asMap()
		data["sequence"] = rec.seq
		if len(deps) > 0 {
			data["depends_on"] = taskIDs(sortedNums(deps))
		}
		if err := s.cfg.OnChange(tx, Change{TaskID: rec.id(), Num: rec.num, Kind: ChangeCreated, Actor: actor, At: formatMillis(ms), Data: data, TraceID: traceID}); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
