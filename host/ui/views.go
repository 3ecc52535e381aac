package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// link is one record of a chain as the task and audit pages show it: its
// hash, the previous link's hash and whether it verifies.
type link struct {
	Chain        string `json:"chain"`
	TaskID       string `json:"task_id"`
	Position     int    `json:"position"`
	RecordID     string `json:"record_id"`
	StoredHash   string `json:"stored_hash"`
	Recomputed   string `json:"recomputed_hash"`
	Verdict      string `json:"verdict"`
	PreviousHash string `json:"-"`
}

// Broken reports a link that does not verify.
func (l link) Broken() bool {
	return l.Verdict != "ok" && l.Verdict != "valid" && l.Verdict != "verified"
}

type verifyOut struct {
	ChainValid     bool             `json:"chain_valid"`
	TotalRecords   int              `json:"total_records"`
	VerifiedCount  int              `json:"verified_records"`
	IntegrityScore int              `json:"integrity_score"`
	BrokenLinks    []map[string]any `json:"broken_links"`
	Trace          []link           `json:"trace"`
}

// chainPrevious fills each traced link's previous hash: the stored hash of
// the link before it in the same chain of the same task.
func chainPrevious(trace []link) {
	last := map[string]string{}
	for i := range trace {
		k := trace[i].TaskID + "/" + trace[i].Chain
		trace[i].PreviousHash = last[k]
		last[k] = trace[i].StoredHash
	}
}

// taskView is the task page's data.
type taskView struct {
	Task     map[string]any
	Subtasks []map[string]any
	Thoughts []map[string]any
	Chain    verifyOut
	Moves    []string
}

func (s *Server) taskData(r *http.Request, g Grant) (any, *errs.Error) {
	id := r.PathValue("id")
	ctx := r.Context()
	v := taskView{}
	if e := s.call(ctx, g, "task_get", map[string]any{"task_id": id, "include_thought_trail": true, "include_dependents": true}, &v.Task); e != nil {
		return nil, e
	}
	st, _ := v.Task["status"].(string)
	v.Moves = tasks.AllowedTransitions(st)
	if deps, ok := v.Task["dependents"].([]any); ok {
		for i, d := range deps {
			if i == PageSize {
				break
			}
			var sub map[string]any
			if e := s.call(ctx, g, "task_get", map[string]any{"task_id": d}, &sub); e == nil {
				v.Subtasks = append(v.Subtasks, sub)
			}
		}
	}
	var th struct {
		Thoughts []map[string]any `json:"thoughts"`
	}
	if e := s.call(ctx, g, "thought_record_list", map[string]any{"task_id": id, "limit": 500}, &th); e != nil {
		return nil, e
	}
	v.Thoughts = th.Thoughts
	if e := s.call(ctx, g, "audit_verify_chain", map[string]any{"task_id": id, "full_trace": true}, &v.Chain); e != nil {
		return nil, e
	}
	chainPrevious(v.Chain.Trace)
	return v, nil
}

// SessionScan bounds how many audit session ids the audits page probes.
// Sessions are numbered, … and no tool lists them yet, so the page
// walks the ids until the first unknown one.
const SessionScan = 2000

// AuditsPerPage is how many sessions the audits page shows at once.
const AuditsPerPage = 20

type rootOut struct {
	SessionID   string `json:"session_id"`
	MerkleRoot  string `json:"merkle_root"`
	IsFinalized bool   `json:"is_finalized"`
	AsOf        string `json:"as_of"`
	LeafCount   int    `json:"leaf_count"`
	TreeDepth   int    `json:"tree_depth"`
}

type auditRow struct {
	Root   rootOut
	Verify verifyOut
	Tasks  []string
	Err    *errs.Error
}

type auditsView struct {
	Rows       []auditRow
	Total      int
	Page, Last int
	Prev, Next int
}

// sessionCount finds how many audit sessions exist by probing ids.
func (s *Server) sessionCount(ctx context.Context, g Grant) (int, *errs.Error) {
	n := 0
	for n < SessionScan {
		var out rootOut
		e := s.call(ctx, g, "merkle_root", map[string]any{"session_id": "A-" + strconv.Itoa(n+1)}, &out)
		if e != nil {
			if e.Status == 404 {
				return n, nil
			}
			return n, e
		}
		n++
	}
	return n, nil
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
	n, e := s.sessionCount(ctx, g)
	if e != nil {
		return nil, e
	}
	v := auditsView{Total: n, Page: 1, Last: max(1, (n+AuditsPerPage-1)/AuditsPerPage)}
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p >= 1 && p <= v.Last {
		v.Page = p
	}
	if v.Page > 1 {
		v.Prev = v.Page - 1
	}
	if v.Page < v.Last {
		v.Next = v.Page + 1
	}
	// Newest first.
	hi := n - (v.Page-1)*AuditsPerPage
	lo := max(0, hi-AuditsPerPage)
	rows := make([]auditRow, hi-lo)
	var wg sync.WaitGroup
	for i := hi; i > lo; i-- {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rows[hi-i] = s.auditRow(ctx, g, "A-"+strconv.Itoa(i), false)
		}(i)
	}
	wg.Wait()
	v.Rows = rows
	return v, nil
}

func (s *Server) auditData(r *http.Request, g Grant) (any, *errs.Error) {
	row := s.auditRow(r.Context(), g, r.PathValue("id"), true)
	if row.Err != nil {
		return nil, row.Err
	}
	return row, nil
}

// section is one tool's output on a page, or the reason it is missing.
type section struct {
	Title string
	Data  any
	Err   *errs.Error
}

func (s *Server) sections(ctx context.Context, g Grant, specs []struct {
	title, tool string
	args        map[string]any
}) []section {
	out := make([]section, len(specs))
	var wg sync.WaitGroup
	for i, sp := range specs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var v map[string]any
			e := s.call(ctx, g, sp.tool, sp.args, &v)
			delete(v, "text") // the Markdown rendering of the same data
			out[i] = section{Title: sp.title, Data: v, Err: e}
		}(i)
	}
	wg.Wait()
	return out
}

type sddView struct {
	Dash     map[string]any
	Leases   []map[string]any
	Sections []section
	Err      *errs.Error
}

func (s *Server) sddData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := sddView{}
	var dash struct {
		Dashboard map[string]any `json:"dashboard"`
	}
	if e := s.call(ctx, g, "sdd_dash", map[string]any{"format": "json"}, &dash); e != nil {
		v.Err = e
	}
	v.Dash = dash.Dashboard
	if ls, ok := v.Dash["activeLeases"].([]any); ok {
		for _, l := range ls {
			if m, ok := l.(map[string]any); ok {
				v.Leases = append(v.Leases, m)
			}
		}
	}
	v.Sections = s.sections(ctx, g, []struct {
		title, tool string
		args        map[string]any
	}{
		{"Spawn queue", "sdd_agent", map[string]any{"action": "queue"}},
		{"Spawn history", "sdd_agent", map[string]any{"action": "history", "limit": 20}},
		{"Skill matrix", "sdd_skill", map[string]any{"action": "list"}},
		{"Vitals", "sdd_vitals", map[string]any{}},
	})
	return v, nil
}

type webhookView struct {
	Webhook    map[string]any
	Deliveries []map[string]any
	Err        *errs.Error
}

type systemView struct {
	Health     host.HealthOutput
	Sessions   []map[string]any
	SessionErr string
	Skills     []map[string]any
	SkillErr   *errs.Error
	SkillProbs []string
	Webhooks   []webhookView
	AdminErr   *errs.Error
}

func (s *Server) systemData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := systemView{Health: s.be.Health(ctx)}
	for _, p := range v.Health.Problems {
		if strings.Contains(strings.ToLower(p), "skill") {
			v.SkillProbs = append(v.SkillProbs, p)
		}
	}
	if s.cfg.Status != nil {
		raw, err := s.cfg.Status()
		var st struct {
			Sessions []map[string]any `json:"sessions"`
		}
		if err != nil {
			v.SessionErr = err.Error()
		} else if err := json.Unmarshal(raw, &st); err != nil {
			v.SessionErr = err.Error()
		}
		v.Sessions = st.Sessions
	}
	var sk struct {
		Skills []map[string]any `json:"skills"`
	}
	v.SkillErr = s.call(ctx, g, "skill_list", map[string]any{}, &sk)
	v.Skills = sk.Skills
	var wl struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	if e := s.call(ctx, g, "admin_webhook_list", map[string]any{"limit": 20}, &wl); e != nil {
		v.AdminErr = e
		return v, nil
	}
	for _, wh := range wl.Webhooks {
		id := fmt.Sprint(firstOf(wh, "id", "webhook_id"))
		var d struct {
			Deliveries []map[string]any `json:"deliveries"`
		}
		e := s.call(ctx, g, "admin_webhook_deliveries", map[string]any{"webhook_id": id, "limit": 10}, &d)
		v.Webhooks = append(v.Webhooks, webhookView{Webhook: wh, Deliveries: d.Deliveries, Err: e})
	}
	return v, nil
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return ""
}
