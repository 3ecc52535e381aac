package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
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
	Session audit.SessionSummary
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
	var list audit.SessionListOutput
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
	var one audit.SessionListOutput
	if e := s.callInternal(r.Context(), g, SessionListTool, map[string]any{"session_id": id}, &one); e == nil && len(one.Sessions) == 1 {
		row.Session = one.Sessions[0]
	}
	return row, nil
}

// QueueShown and HistoryShown bound the sdd page's spawn tables.
const (
	QueueShown   = 50
	HistoryShown = 20
)

// sddView is the spec-driven page: the sdd area's dashboard, spawn queue
// and history, and skill matrix, each with the error that kept it away.
type sddView struct {
	Dash       engine.Dashboard
	DashErr    *errs.Error
	Queue      []engine.SpawnQueueItem
	QueueTotal int
	QueueErr   *errs.Error
	History    []engine.SpawnHistoryEvent
	HistoryErr *errs.Error
	Matrix     engine.SkillMatrix
	MatrixErr  *errs.Error
}

func (s *Server) sddData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := sddView{}
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() {
		var out struct {
			Dashboard engine.Dashboard `json:"dashboard"`
		}
		v.DashErr = s.call(ctx, g, "sdd_dash", map[string]any{"format": "json"}, &out)
		v.Dash = out.Dashboard
	})
	run(func() {
		var out struct {
			Items []engine.SpawnQueueItem `json:"items"`
		}
		v.QueueErr = s.callReadAction(ctx, g, "sdd_agent", map[string]any{"action": "queue"}, &out)
		v.QueueTotal = len(out.Items)
		v.Queue = out.Items[:min(len(out.Items), QueueShown)]
	})
	run(func() {
		var out struct {
			Events []engine.SpawnHistoryEvent `json:"events"`
		}
		v.HistoryErr = s.callReadAction(ctx, g, "sdd_agent", map[string]any{"action": "history", "limit": HistoryShown}, &out)
		v.History = out.Events
	})
	run(func() {
		v.MatrixErr = s.callReadAction(ctx, g, "sdd_skill", map[string]any{"action": "list"}, &v.Matrix)
	})
	wg.Wait()
	return v, nil
}

// webhookView is one webhook with its latest deliveries, in the admin
// area's JSON names.
type webhookView struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Status     string   `json:"status"`
	EventTypes []string `json:"eventTypes"`
	Deliveries []deliveryView
	Err        *errs.Error
}

type deliveryView struct {
	ID            string `json:"id"`
	EventType     string `json:"eventType"`
	Status        string `json:"status"`
	StatusCode    int    `json:"statusCode"`
	Attempts      int    `json:"attempts"`
	UpdatedAt     string `json:"updatedAt"`
	NextAttemptAt string `json:"nextAttemptAt"`
	LastError     string `json:"lastError"`
	Reason        string `json:"reason"`
	Test          bool   `json:"test"`
}

// WebhooksShown and DeliveriesShown bound the system page's webhook section.
const (
	WebhooksShown   = 20
	DeliveriesShown = 10
)

type systemView struct {
	Health          host.HealthOutput
	Plugins         []pluginRow
	Sessions        []daemon.SessionInfo
	SessionErr      string
	DefaultToolsets string
	Skills          []map[string]any
	SkillErr        *errs.Error
	SkillProbs      []string
	Webhooks        []webhookView
	AdminErr        *errs.Error
}

func (s *Server) systemData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := systemView{Health: s.be.Health(ctx), DefaultToolsets: config.DefaultToolsets}
	v.Plugins = pluginRows(v.Health.Plugins, s.cfg.Plugins)
	for _, p := range v.Health.Problems {
		if strings.Contains(strings.ToLower(p), "skill") {
			v.SkillProbs = append(v.SkillProbs, p)
		}
	}
	if s.cfg.Status != nil {
		raw, err := s.cfg.Status()
		var st struct {
			Sessions []daemon.SessionInfo `json:"sessions"`
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
		Webhooks []webhookView `json:"webhooks"`
	}
	if e := s.call(ctx, g, "admin_webhook_list", map[string]any{"limit": WebhooksShown}, &wl); e != nil {
		v.AdminErr = e
		return v, nil
	}
	for _, wh := range wl.Webhooks {
		var d struct {
			Deliveries []deliveryView `json:"deliveries"`
		}
		wh.Err = s.call(ctx, g, "admin_webhook_deliveries", map[string]any{"webhook_id": wh.ID, "limit": DeliveriesShown}, &d)
		wh.Deliveries = d.Deliveries
		v.Webhooks = append(v.Webhooks, wh)
	}
	return v, nil
}
