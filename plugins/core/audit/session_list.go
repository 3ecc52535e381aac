package audit

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// SessionListMax bounds one page of audit_session_list.
const SessionListMax = 100

// SessionListInput is audit_session_list's input: one page, newest first,
// or the one session SessionID names.
type SessionListInput struct {
	SessionID *string `json:"session_id,omitempty"`
	Limit     *int    `json:"limit,omitempty"`
	Offset    *int    `json:"offset,omitempty"`
}

// SessionSummary is one audit session as the list shows it.
type SessionSummary struct {
	SessionID   string `json:"session_id"`
	TaskID      string `json:"task_id"`
	AuditorID   string `json:"auditor_id"`
	Reason      string `json:"reason,omitempty"`
	Scope       string `json:"scope"`
	StartedAt   string `json:"started_at"`
	IsFinalized bool   `json:"is_finalized"`
	FinalizedAt string `json:"finalized_at,omitempty"`
	MerkleRoot  string `json:"merkle_root,omitempty"`
}

// SessionListOutput is audit_session_list's output.
type SessionListOutput struct {
	Sessions   []SessionSummary `json:"sessions"`
	TotalCount int              `json:"total_count"`
	Offset     int              `json:"offset"`
	Limit      int              `json:"limit"`
}

// ListSessions pages through the audit sessions, newest first: what the
// dashboard's audits page lists. MerkleRoot is the frozen root of a
// finalized session (merkle_root computes an open one's).
func (s *Service) ListSessions(in SessionListInput) (SessionListOutput, error) {
	out := SessionListOutput{Sessions: []SessionSummary{}, Limit: 20}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > SessionListMax {
			return out, errs.Invalidf("limit", "maximum", "limit must be between 1 and %d, got %d", SessionListMax, *in.Limit)
		}
		out.Limit = *in.Limit
	}
	if in.Offset != nil {
		if *in.Offset < 0 {
			return out, errs.Invalidf("offset", "minimum", "offset must be ≥ 0, got %d", *in.Offset)
		}
		out.Offset = *in.Offset
	}
	err := s.st.View(func(tx kv.Tx) error {
		if in.SessionID != nil {
			ss, err := loadSession(tx, "session_id", *in.SessionID, errs.SessionNotFound)
			if err != nil {
				return err
			}
			out.Sessions, out.TotalCount = append(out.Sessions, summarize(ss)), 1
			return nil
		}
		b := tx.Bucket([]byte(store.BucketAuditSessions))
		out.TotalCount = b.Count()
		c := b.Cursor()
		skip := out.Offset
		for k, v := c.Last(); k != nil && len(out.Sessions) < out.Limit; k, v = c.Prev() {
			if skip > 0 {
				skip--
				continue
			}
			var ss session
			if err := json.Unmarshal(v, &ss); err != nil {
				return corrupt(fmt.Errorf("corrupt audit session at key %x: %v", k, err))
			}
			out.Sessions = append(out.Sessions, summarize(&ss))
		}
		return nil
	})
	if err != nil {
		return SessionListOutput{}, errs.From(err)
	}
	return out, nil
}

func summarize(ss *session) SessionSummary {
	sum := SessionSummary{SessionID: ss.SessionID, TaskID: ss.TaskID, AuditorID: ss.AuditorID, Reason: ss.Reason, Scope: ss.Scope, StartedAt: ss.StartedAt}
	if f := ss.Frozen; f != nil {
		sum.IsFinalized, sum.FinalizedAt, sum.MerkleRoot = true, f.FinalizedAt, f.Root
	}
	return sum
}
