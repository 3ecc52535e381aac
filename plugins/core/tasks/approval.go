package tasks

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/internal/approval"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Approvals that block (docs/decisions.md D45): a project's approval mode
// makes every move of its tasks to done wait for a person. The agent's
// move is refused 428 ERR_APPROVAL_REQUIRED and leaves a pending request;
// a person approves or rejects it (task_approve, from the dashboard, the
// CLI, or the host asking the person at the agent's client); an approval
// stands until the task is done.

// Project approval modes.
const (
	// ApprovalOff: moves to done need no one (the default).
	ApprovalOff = approval.Off
	// ApprovalOn: a move to done needs a person; the host may ask the
	// person at the agent's client.
	ApprovalOn = approval.On
	// ApprovalStrict: only the dashboard or the CLI approves; the client
	// is never asked.
	ApprovalStrict = approval.Strict
)

// ApprovalModes lists the modes (for schema enums).
var ApprovalModes = approval.Modes

// Approval states of a task.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
)

// Decisions task_approve takes.
const (
	DecisionApprove = approval.Approve
	DecisionReject  = approval.Reject
)

// Where a decision was given (task_approve's via).
const (
	ViaDashboard    = approval.ViaDashboard
	ViaCLI          = approval.ViaCLI
	ViaElicitation  = approval.ViaElicitation
	ViaInputRequest = approval.ViaInputRequest
)

// Vias lists the places a decision may come from (for schema enums).
var Vias = approval.Vias

// MaxApprovalReason bounds a decision's reason, in characters.
const MaxApprovalReason = approval.MaxReason

// ApproveTool is the internal tool a 428's details name to record the
// person's decision.
const ApproveTool = "task_approve"

// Approval is a task's approval as task_get and task_context show it:
// for a pending request, by and at are the requester's; for a decision,
// the person's.
type Approval struct {
	Mode   string `json:"mode" jsonschema:"enum=on,enum=strict"`
	State  string `json:"state" jsonschema:"enum=pending,enum=approved,enum=rejected"`
	By     string `json:"by"`
	At     string `json:"at"`
	Reason string `json:"reason,omitempty"`
	Via    string `json:"via,omitempty" jsonschema:"enum=dashboard,enum=cli,enum=elicitation,enum=input_request"`
}

// projectMode is a project's stored approval mode record.
type projectMode struct {
	Mode      string `json:"mode"`
	ChangedBy string `json:"changed_by"`
	ChangedAt string `json:"changed_at"`
}

// approvalRecord is a task's stored approval: the open request, if any,
// and the last decision. State is pending while a request waits (even
// after an earlier rejection, which stays for the agent to read).
type approvalRecord struct {
	State       string `json:"state"`
	RequestedBy string `json:"requested_by,omitempty"`
	RequestedAt string `json:"requested_at,omitempty"`
	From        string `json:"from,omitempty"`
	Decision    string `json:"decision,omitempty"`
	DecidedBy   string `json:"decided_by,omitempty"`
	DecidedAt   string `json:"decided_at,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Via         string `json:"via,omitempty"`
}

var (
	bucketProjectApproval = []byte(store.BucketProjectApproval)
	bucketTaskApprovals   = []byte(store.BucketTaskApprovals)
)

// loadProjectMode reads slug's approval mode; a project without one (or a
// store opened without the bucket: a read-only copy) is off.
func loadProjectMode(tx kv.Tx, slug string) (projectMode, error) {
	pm := projectMode{Mode: ApprovalOff}
	b := tx.Bucket(bucketProjectApproval)
	if !b.Exists() || slug == "" {
		return pm, nil
	}
	raw := b.Get([]byte(slug))
	if raw == nil {
		return pm, nil
	}
	if err := json.Unmarshal(raw, &pm); err != nil {
		return pm, err
	}
	if pm.Mode == "" {
		pm.Mode = ApprovalOff
	}
	return pm, nil
}

// modeOf is slug's approval mode.
func modeOf(tx kv.Tx, slug string) (string, error) {
	pm, err := loadProjectMode(tx, slug)
	return pm.Mode, err
}

// loadApproval reads task num's approval record (found false: none).
func loadApproval(tx kv.Tx, num uint64) (approvalRecord, bool, error) {
	var ar approvalRecord
	b := tx.Bucket(bucketTaskApprovals)
	if !b.Exists() {
		return ar, false, nil
	}
	raw := b.Get(store.U64(num))
	if raw == nil {
		return ar, false, nil
	}
	return ar, true, json.Unmarshal(raw, &ar)
}

func putApproval(tx kv.Tx, num uint64, ar approvalRecord) error {
	raw, err := json.Marshal(ar)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketTaskApprovals).Put(store.U64(num), raw)
}

// view is the approval task_get and task_context show under mode.
func (ar approvalRecord) view(mode string) *Approval {
	switch ar.State {
	case ApprovalPending:
		return &Approval{Mode: mode, State: ar.State, By: ar.RequestedBy, At: ar.RequestedAt}
	case ApprovalApproved, ApprovalRejected:
		return &Approval{Mode: mode, State: ar.State, By: ar.DecidedBy, At: ar.DecidedAt, Reason: ar.Reason, Via: ar.Via}
	}
	return nil
}

// approvalOf is what task_get and task_context show of task rec's
// approval: nil when its project needs none or nothing was asked or
// decided.
func approvalOf(tx kv.Tx, rec *record) (*Approval, error) {
	mode, err := modeOf(tx, rec.project)
	if err != nil || mode == ApprovalOff {
		return nil, err
	}
	ar, ok, err := loadApproval(tx, rec.num)
	if err != nil || !ok {
		return nil, err
	}
	return ar.view(mode), nil
}
