package ui

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/internal/tasklife"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// PageSize is the most tasks any dashboard request returns: a column loads
// page by page as it scrolls, so 10,000 tasks never travel at once.
const PageSize = 50

// taskQuery is the board's filter, in task_list's terms.
type taskQuery struct {
	Project  string
	Search   string
	Assignee string
	Label    string
	Priority string
}

func queryFrom(r *http.Request) taskQuery {
	q := r.URL.Query()
	return taskQuery{
		Project: strings.TrimSpace(q.Get("project")), Search: strings.TrimSpace(q.Get("q")),
		Assignee: strings.TrimSpace(q.Get("assignee")), Label: strings.TrimSpace(q.Get("label")),
		Priority: strings.TrimSpace(q.Get("priority")),
	}
}

// listArgs builds task_list's input for one column page.
func (tq taskQuery) listArgs(status string, offset, limit int) map[string]any {
	a := map[string]any{"limit": limit, "offset": offset, "sort_by": "updated", "sort_order": "desc"}
	if status != "" {
		a["status"] = []string{status}
	}
	for k, v := range map[string]string{"project": tq.Project, "search": tq.Search, "assignee": tq.Assignee, "label": tq.Label} {
		if v != "" {
			a[k] = v
		}
	}
	if tq.Priority != "" {
		a["priority"] = []string{tq.Priority}
	}
	return a
}

// parsePaging reads offset and limit, capping limit at PageSize.
func parsePaging(r *http.Request) (offset, limit int, e *errs.Error) {
	offset, limit = 0, PageSize
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, errs.Invalidf("offset", "minimum", "offset must be a whole number ≥ 0, got %q", v)
		}
		offset = n
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, errs.Invalidf("limit", "minimum", "limit must be a whole number ≥ 1, got %q", v)
		}
		limit = min(n, PageSize)
	}
	return offset, limit, nil
}

// columnPage is one page of a board column.
type columnPage struct {
	Status     string           `json:"status"`
	Tasks      []map[string]any `json:"tasks"`
	TotalCount int              `json:"total_count"`
	// TotalCapped: TotalCount is a lower bound (task_list stops counting a
	// common word's matches, docs/decisions.md D9).
	TotalCapped bool `json:"total_capped,omitempty"`
	Offset      int  `json:"offset"`
	Limit       int  `json:"limit"`
	Actions     bool `json:"actions"`
}

// apiTasks answers one page of one column (or of every status when none is
// given), each task with the moves its status allows.
func (s *Server) apiTasks(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status != "" && !tasklife.IsStatus(status) {
		writeErr(w, errs.Invalidf("status", "enum", "status %q is not one of %s", status, strings.Join(tasklife.Statuses(), ", ")))
		return
	}
	offset, limit, e := parsePaging(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	g := grantFrom(r.Context())
	var out struct {
		Tasks       []map[string]any `json:"tasks"`
		TotalCount  int              `json:"total_count"`
		TotalCapped bool             `json:"total_capped"`
	}
	if e := s.call(r.Context(), g, "task_list", queryFrom(r).listArgs(status, offset, limit), &out); e != nil {
		writeErr(w, e)
		return
	}
	if len(out.Tasks) > limit { // never more than a page, whatever the tool did
		out.Tasks = out.Tasks[:limit]
	}
	s.enrichCards(r.Context(), g, out.Tasks)
	for _, t := range out.Tasks {
		st, _ := t["status"].(string)
		t["moves"] = tasklife.Next(st)
	}
	if out.Tasks == nil {
		out.Tasks = []map[string]any{}
	}
	writeJSON(w, 200, columnPage{Status: status, Tasks: out.Tasks, TotalCount: out.TotalCount, TotalCapped: out.TotalCapped, Offset: offset, Limit: limit, Actions: g.AllowActions})
}

// boardView is the board page's template data.
type boardView struct {
	Query taskQuery
	// From is the session's project the login passed over for having no
	// tasks (see landing).
	From     string
	Statuses []string
	PageSize int
}

func (s *Server) boardData(r *http.Request, _ Grant) (any, *errs.Error) {
	from := strings.TrimSpace(r.URL.Query().Get("from"))
	return boardView{Query: queryFrom(r), From: from, Statuses: tasklife.Statuses(), PageSize: PageSize}, nil
}
