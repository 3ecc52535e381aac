package tasks

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ProjectApprovalInput is project_approval's input: without Mode it only
// reads.
type ProjectApprovalInput struct {
	Project string  `json:"project"`
	Mode    *string `json:"mode,omitempty"`
}

// ProjectApprovalOutput is a project's approval mode and who set it last
// (both empty while it was never set).
type ProjectApprovalOutput struct {
	Project   string `json:"project"`
	Mode      string `json:"mode" jsonschema:"enum=off,enum=on,enum=strict"`
	ChangedBy string `json:"changed_by"`
	ChangedAt string `json:"changed_at"`
}

// ProjectApproval reads a registered project's approval mode, or sets it
// when in.Mode is given (setting the mode it has writes nothing).
func (s *Service) ProjectApproval(actor string, in ProjectApprovalInput) (ProjectApprovalOutput, error) {
	if err := checkSlug("project", in.Project); err != nil {
		return ProjectApprovalOutput{}, err
	}
	if in.Mode != nil && !slices.Contains(ApprovalModes, *in.Mode) {
		return ProjectApprovalOutput{}, errs.Invalidf("mode", "enum", "mode %q is not one of %s", clip(*in.Mode), strings.Join(ApprovalModes, ", "))
	}
	var pm projectMode
	run := s.st.View
	if in.Mode != nil {
		run = s.st.Commit
	}
	err := run(func(tx kv.Tx) error {
		if !projectExists(tx, in.Project) {
			return projectNotFound(in.Project)
		}
		var err error
		if pm, err = loadProjectMode(tx, in.Project); err != nil {
			return err
		}
		if in.Mode == nil || *in.Mode == pm.Mode {
			return nil
		}
		pm = projectMode{Mode: *in.Mode, ChangedBy: actorOrUnknown(actor), ChangedAt: FormatTime(s.now())}
		raw, err := json.Marshal(pm)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketProjectApproval).Put([]byte(in.Project), raw)
	})
	if err != nil {
		return ProjectApprovalOutput{}, internal(err)
	}
	return ProjectApprovalOutput{Project: in.Project, Mode: pm.Mode, ChangedBy: pm.ChangedBy, ChangedAt: pm.ChangedAt}, nil
}

// ApprovalsInput is task_approvals' input.
type ApprovalsInput struct {
	Project *string `json:"project,omitempty"`
}

// PendingApproval is one request that waits for a person.
type PendingApproval struct {
	TaskID      string `json:"task_id"`
	Title       string `json:"title"`
	Project     string `json:"project"`
	Mode        string `json:"mode" jsonschema:"enum=on,enum=strict"`
	Status      string `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review"`
	RequestedBy string `json:"requested_by"`
	RequestedAt string `json:"requested_at"`
}

// ApprovalsOutput is task_approvals' output, newest request first.
type ApprovalsOutput struct {
	Pending []PendingApproval `json:"pending"`
}

// Approvals lists the requests no person has decided yet, newest first:
// of open tasks, in projects whose approval is on or strict (a request
// left behind by a project turned off, or by a task cancelled since,
// waits for no one).
func (s *Service) Approvals(in ApprovalsInput) (ApprovalsOutput, error) {
	if in.Project != nil {
		if err := checkSlug("project", *in.Project); err != nil {
			return ApprovalsOutput{}, err
		}
	}
	out := ApprovalsOutput{Pending: []PendingApproval{}}
	err := s.st.View(func(tx kv.Tx) error {
		b := tx.Bucket(bucketTaskApprovals)
		if !b.Exists() {
			return nil
		}
		modes := map[string]string{}
		return b.ForEach(func(k, v []byte) error {
			var ar approvalRecord
			if len(k) != 8 || json.Unmarshal(v, &ar) != nil || ar.State != ApprovalPending {
				return nil
			}
			rec, ok, err := loadRecord(tx, binary.BigEndian.Uint64(k))
			if err != nil || !ok || !isOpen(rec.status) || (in.Project != nil && rec.project != *in.Project) {
				return err
			}
			mode, seen := modes[rec.project]
			if !seen {
				if mode, err = modeOf(tx, rec.project); err != nil {
					return err
				}
				modes[rec.project] = mode
			}
			if mode == ApprovalOff {
				return nil
			}
			out.Pending = append(out.Pending, PendingApproval{
				TaskID: rec.id(), Title: rec.title, Project: rec.project, Mode: mode,
				Status: statusName(rec.status), RequestedBy: ar.RequestedBy, RequestedAt: ar.RequestedAt,
			})
			return nil
		})
	})
	if err != nil {
		return ApprovalsOutput{}, internal(err)
	}
	slices.SortStableFunc(out.Pending, func(a, b PendingApproval) int {
		if c := cmp.Compare(b.RequestedAt, a.RequestedAt); c != 0 {
			return c
		}
		na, _ := ParseTaskID(a.TaskID)
		nb, _ := ParseTaskID(b.TaskID)
		return cmp.Compare(nb, na)
	})
	return out, nil
}
