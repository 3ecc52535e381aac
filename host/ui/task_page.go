package ui

// The task page: every field, sub-tasks, the thought trail and both
// chains with each link's verdict.

import (
	"context"
	"html/template"
	"net/http"
	"strings"

	"github.com/cairn-mcp/cairn/internal/tasklife"
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
	TraceID      string `json:"trace_id"`
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
	Task         map[string]any
	Head, Tail   []taskField
	Description  template.HTML
	DependsOn    []taskRef
	DependedOnBy []taskRef
	Subtasks     []taskRef
	Thoughts     []map[string]any
	Chain        verifyOut
	Moves        []string
	Edit         editValues
}

// editValues fill the edit form: the task's fields as a person types them.
type editValues struct {
	Title, Status, Priority, Description, Labels, DependsOn string
	Moves, Priorities                                       []string
}

// taskPriorities are task_update's priorities, lowest first.
var taskPriorities = []string{"low", "normal", "high", "critical"}

func editValuesOf(t map[string]any) editValues {
	st, _ := t["status"].(string)
	pr, _ := t["priority"].(string)
	d, _ := t["description"].(string)
	title, _ := t["title"].(string)
	return editValues{Title: title, Status: st, Priority: pr, Description: d, Labels: strings.Join(stringList(t["labels"]), ", "),
		DependsOn: strings.Join(stringList(t["depends_on"]), ", "), Moves: tasklife.Next(st), Priorities: taskPriorities}
}

// taskRef is a related task as the page links it.
type taskRef struct {
	ID, Title, Status string
}

// taskRefs reads the title and status of each task named, at most a page
// of them; a task that cannot be read still shows, by its id.
func (s *Server) taskRefs(ctx context.Context, g Grant, ids []string) []taskRef {
	var out []taskRef
	for i, id := range ids {
		if i == PageSize {
			break
		}
		ref := taskRef{ID: id}
		var t struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		}
		if e := s.call(ctx, g, "task_get", map[string]any{"task_id": id}, &t); e == nil {
			ref.Title, ref.Status = t.Title, t.Status
		}
		out = append(out, ref)
	}
	return out
}

func (s *Server) taskData(r *http.Request, g Grant) (any, *errs.Error) {
	id := r.PathValue("id")
	ctx := r.Context()
	v := taskView{}
	if e := s.call(ctx, g, "task_get", map[string]any{"task_id": id, "include_thought_trail": true, "include_dependents": true}, &v.Task); e != nil {
		return nil, e
	}
	st, _ := v.Task["status"].(string)
	v.Moves = tasklife.Next(st)
	v.Edit = editValuesOf(v.Task)
	v.Head, v.Tail = taskFields(v.Task)
	if d, _ := v.Task["description"].(string); d != "" {
		v.Description = renderMarkdown(d)
	}
	v.DependsOn = s.taskRefs(ctx, g, stringList(v.Task["depends_on"]))
	v.DependedOnBy = s.taskRefs(ctx, g, stringList(v.Task["depended_on_by"]))
	v.Subtasks = s.taskRefs(ctx, g, stringList(v.Task["dependents"]))
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
