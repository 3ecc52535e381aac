package ui

// The audits pages: sessions with scope, integrity and roots; one
// session's records with the broken links at their positions.

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// AuditsPerPage is how many sessions the audits page shows at once.
const AuditsPerPage = 20

// SessionListTool pages through the audit sessions (core, internal toolset).
const SessionListTool = "audit_session_list"

type rootOut struct {
	SessionID   string `json:"session_id"`
	MerkleRoot  string `json:"merkle_root"`
	IsFinalized bool   `json:"is_finalized"`
	AsOf        string `json:"as_of"`
	LeafCount   int    `json:"leaf_count"`
	TreeDepth   int    `json:"tree_depth"`
}

type auditRow struct {
	Session sessionSummary
	Root    rootOut
	Verify  verifyOut
	Tasks   []string
	Err     *errs.Error
}

type auditsView struct {
	Rows       []auditRow
	Total      int
	Page, Last int
	Prev, Next int
}

func (s *Server) auditRow(ctx context.Context, g Grant, id string, trace bool) auditRow {
	var row auditRow
	if e := s.call(ctx, g, "merkle_root", map[string]any{"session_id": id}, &row.Root); e != nil {
		row.Root.SessionID, row.Err = id, e
		return row
	}
	if e := s.call(ctx, g, "audit_verify_chain", map[string]any{"session_id": id, "full_trace": true}, &row.Verify); e != nil {
		row.Err = e
		return row
	}
	seen := map[string]bool{}
	for _, l := range row.Verify.Trace {
		if !seen[l.TaskID] {
			seen[l.TaskID] = true
			row.Tasks = append(row.Tasks, l.TaskID)
		}
	}
	chainPrevious(row.Verify.Trace)
	if !trace {
		row.Verify.Trace = nil
	}
	return row
}

func (s *Server) auditsData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := auditsView{Page: 1}
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p >= 1 {
		v.Page = p
	}
	var list sessionList
	if e := s.callInternal(ctx, g, SessionListTool, map[string]any{"limit": AuditsPerPage, "offset": (v.Page - 1) * AuditsPerPage}, &list); e != nil {
		return nil, e
	}
	v.Total = list.TotalCount
	v.Last = max(1, (v.Total+AuditsPerPage-1)/AuditsPerPage)
	if v.Page > 1 {
		v.Prev = v.Page - 1
	}
	if v.Page < v.Last {
		v.Next = v.Page + 1
	}
	rows := make([]auditRow, len(list.Sessions))
	var wg sync.WaitGroup
	for i, sum := range list.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = s.auditRow(ctx, g, sum.SessionID, false)
			rows[i].Session = sum
		}()
	}
	wg.Wait()
	v.Rows = rows
	return v, nil
}

func (s *Server) auditData(r *http.Request, g Grant) (any, *errs.Error) {
	id := r.PathValue("id")
	row := s.auditRow(r.Context(), g, id, true)
	if row.Err != nil {
		return nil, row.Err
	}
	var one sessionList
	if e := s.callInternal(r.Context(), g, SessionListTool, map[string]any{"session_id": id}, &one); e == nil && len(one.Sessions) == 1 {
		row.Session = one.Sessions[0]
	}
	return row, nil
}
