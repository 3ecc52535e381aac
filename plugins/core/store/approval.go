package store

// Approval buckets (docs/decisions.md D45). Like BucketLastProject they
// are created on open rather than by a versioned migration: older builds
// ignore buckets they do not know, and on PostgreSQL every bucket exists.
const (
	// BucketProjectApproval maps a project slug to its approval mode
	// record (JSON: mode, changed_by, changed_at); a project without one
	// is "off". Its own bucket, so the project record keeps its format.
	BucketProjectApproval = "project_approval"
	// BucketTaskApprovals maps a task number (8 bytes, big endian) to its
	// approval record (JSON): the pending request and the last decision.
	BucketTaskApprovals = "task_approvals"
)
