package ui

// Creating and editing tasks from the dashboard (docs/decisions.md D45:
// people steer). A form posts its fields; the dashboard turns them into one
// task_create or task_update call made as the logged-in person, so the
// core area writes the task's event-chain link (task_created or
// task_updated, with the person as its actor) in the same transaction as
// the change: the edit is a link in the task's chain without anything more.

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/internal/tasklife"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// readOnlyRefusal is the answer to an action from a read-only login. It
// names the dashboard's own switch: the person ran `cairn ui`, not a
// session whose mode they set.
func readOnlyRefusal() *errs.Error {
	return &errs.Error{Status: 403, Code: errs.Forbidden, Message: "this dashboard is read-only; run `cairn ui --allow-actions` to act from it", Details: map[string]any{"required": "allow-actions"}}
}

// taskForm is what the new-task and edit forms post. Lists arrive as the
// text a person types (comma- or space-separated), as a form holds them.
type taskForm struct {
	Title         string `json:"title"`
	Description   string `json:"description"`
	Priority      string `json:"priority"`
	Labels        string `json:"labels"`
	DependsOn     string `json:"depends_on"`
	Project       string `json:"project"`
	Status        string `json:"status"`
	BlockedReason string `json:"blocked_reason"`
}

var taskIDPattern = regexp.MustCompile(`^T-[1-9][0-9]*$`)

// splitList reads a typed list: items separated by commas or line breaks,
// trimmed, empty ones and repeats dropped, in the order typed.
func splitList(s string) []string {
	out := []string{}
	for _, it := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if it = strings.TrimSpace(it); it != "" && !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

// dependsOn reads the typed dependencies: task ids, separated by commas or
// spaces. A word that is not a task id is refused here, naming the field,
// before any call.
func (f taskForm) dependsOn() ([]string, *errs.Error) {
	out := []string{}
	for _, typed := range strings.FieldsFunc(f.DependsOn, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		id := strings.ToUpper(typed)
		if !taskIDPattern.MatchString(id) {
			return nil, errs.Invalidf("depends_on", "pattern", "%q is not a task id; write ids like T-12, separated by commas", typed)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// createArgs is task_create's input for the new-task form.
func (f taskForm) createArgs() (map[string]any, *errs.Error) {
	title := strings.TrimSpace(f.Title)
	if title == "" {
		return nil, errs.Invalid("title", "required", "a task needs a title")
	}
	deps, e := f.dependsOn()
	if e != nil {
		return nil, e
	}
	args := map[string]any{"title": title}
	if d := strings.TrimSpace(f.Description); d != "" {
		args["description"] = d
	}
	if p := strings.TrimSpace(f.Priority); p != "" {
		args["priority"] = p
	}
	if p := strings.TrimSpace(f.Project); p != "" {
		args["project"] = p
	}
	if l := splitList(f.Labels); len(l) > 0 {
		args["labels"] = l
	}
	if len(deps) > 0 {
		args["depends_on"] = deps
	}
	return args, nil
}

// editedTask is what the edit form compares against: task_get's fields the
// form shows.
type editedTask struct {
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Priority    string   `json:"priority"`
	Labels      []string `json:"labels"`
	DependsOn   []string `json:"depends_on"`
	Status      string   `json:"status"`
}

// updateArgs is task_update's input for the edit form: only the fields the
// person changed, so the chain link records what changed and nothing else.
// It returns nil args when nothing changed.
func (f taskForm) updateArgs(id string, cur editedTask) (map[string]any, *errs.Error) {
	deps, e := f.dependsOn()
	if e != nil {
		return nil, e
	}
	args := map[string]any{}
	if t := strings.TrimSpace(f.Title); t != strings.TrimSpace(cur.Title) {
		args["title"] = t
	}
	if d := strings.TrimSpace(f.Description); d != strings.TrimSpace(cur.Description) {
		args["description"] = d
	}
	if p := strings.TrimSpace(f.Priority); p != "" && p != cur.Priority {
		args["priority"] = p
	}
	if l := splitList(f.Labels); !slices.Equal(l, nonNil(cur.Labels)) {
		args["labels"] = l
	}
	if !slices.Equal(deps, nonNil(cur.DependsOn)) {
		args["depends_on"] = deps
	}
	if st := strings.TrimSpace(f.Status); st != "" && st != cur.Status {
		if !tasklife.IsStatus(st) {
			return nil, errs.Invalidf("status", "enum", "status %q is not one of %s", st, strings.Join(tasklife.Statuses(), ", "))
		}
		args["status"] = st
		if st == tasklife.Blocked {
			args["blocked_reason"] = strings.TrimSpace(f.BlockedReason)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	args["task_id"] = id
	return args, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// apiCreate creates a task from the new-task form as the logged-in person.
func (s *Server) apiCreate(w http.ResponseWriter, r *http.Request) {
	g, f, ok := readPersonPost[taskForm](w, r, "form")
	if !ok {
		return
	}
	args, e := f.createArgs()
	if e != nil {
		writeErr(w, e)
		return
	}
	var out map[string]any
	if e := s.call(r.Context(), g, "task_create", args, &out); e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, out)
}

// apiEdit applies the edit form to a task as the logged-in person: the
// changed fields in one task_update.
func (s *Server) apiEdit(w http.ResponseWriter, r *http.Request) {
	g, f, ok := readPersonPost[taskForm](w, r, "form")
	if !ok {
		return
	}
	id := r.PathValue("id")
	out, e := s.edit(r.Context(), g, id, f)
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, out)
}

func (s *Server) edit(ctx context.Context, g Grant, id string, f taskForm) (map[string]any, *errs.Error) {
	var cur editedTask
	if e := s.call(ctx, g, "task_get", map[string]any{"task_id": id}, &cur); e != nil {
		return nil, e
	}
	args, e := f.updateArgs(id, cur)
	if e != nil {
		return nil, e
	}
	if args == nil {
		return map[string]any{"task_id": id, "unchanged": true}, nil
	}
	var out map[string]any
	if e := s.call(ctx, g, "task_update", args, &out); e != nil {
		return nil, e
	}
	return out, nil
}
