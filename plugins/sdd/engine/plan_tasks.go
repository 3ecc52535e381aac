package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A plan's items become tasks on the task board when sdd_plan is asked to
// (docs/decisions.md D45): one task per item, in the plan's order. An item
// depends on the item before it, unless its text names its own: "(after 2,
// 3)" makes it depend on items 2 and 3, "(after none)" on nothing. An item
// may only follow earlier items, so the plan's order is always one the
// board can keep, and no plan makes a cycle.

// TaskBoard is the task board plan items become tasks on and leases name
// tasks of: the core area's tools, which the plugin reaches for the engine
// (the engine knows nothing of how).
type TaskBoard interface {
	// CreateTask makes one plan item a task and returns its id. Item
	// numbers the task within its plan, so that a repeated call makes it
	// once.
	CreateTask(t NewTask) (taskID string, err error)
	// CheckTask returns nil when task id exists, else its typed error: a
	// 404 ERR_TASK_NOT_FOUND naming taskId.
	CheckTask(id string) error
}

// NewTask is a plan item as a task to create.
type NewTask struct {
	// Item is the item's number in its plan (from 1).
	Item        int
	Title       string
	Description string
	DependsOn   []string
}

// PlanTask is one plan item made a task, as sdd_plan reports it.
type PlanTask struct {
	Item      int      `json:"item"`
	TaskID    string   `json:"task_id"`
	DependsOn []string `json:"depends_on"`
}

// PlanItem is one item of a plan's task list: its number, its text
// without its "(after …)" reference, and the items it follows.
type PlanItem struct {
	Number int
	Text   string
	After  []int
}

// The expressions here compile on first use, not in package init, which
// every cairn process runs (docs/decisions.md D46).

// afterRef is an item's explicit reference to the items it follows.
var afterRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\(\s*after\b([^)]*)\)`) })

// maxTaskTitle is the longest task title the board takes, and
// maxTaskText the longest item text a task's description carries, in
// characters (the board takes 8,000).
const (
	maxTaskTitle = 256
	maxTaskText  = 7000
)

// maxPlanTasks is how many items one plan makes tasks of.
const maxPlanTasks = 200

// planItems returns the items of the plan context renders, with their
// dependencies: the "(after …)" reference of an item, else the item before
// it.
func planItems(context string) ([]PlanItem, error) {
	texts := planTaskLines(context)
	if len(texts) > maxPlanTasks {
		return nil, errs.Invalidf("context", "maxItems", "the plan has %d items; one plan makes at most %d tasks: split it into phases", len(texts), maxPlanTasks).With("limit", maxPlanTasks)
	}
	out := make([]PlanItem, 0, len(texts))
	for i, text := range texts {
		n := i + 1
		it := PlanItem{Number: n, Text: text}
		if n > 1 {
			it.After = []int{n - 1}
		}
		if m := afterRef().FindStringSubmatchIndex(text); m != nil {
			after, err := parseAfter(n, text[m[2]:m[3]])
			if err != nil {
				return nil, err
			}
			it.After = after
			it.Text = strings.Join(strings.Fields(text[:m[0]]+" "+text[m[1]:]), " ")
		}
		if it.Text == "" {
			return nil, errs.Invalidf("context", "planItem", "plan item %d has no text besides its (after …) reference", n).With("item", n)
		}
		out = append(out, it)
	}
	return out, nil
}

// parseAfter reads the list of an "(after …)" reference of item n:
// numbers of earlier items separated by commas or spaces, or "none".
func parseAfter(n int, list string) ([]int, error) {
	fields := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 1 && strings.EqualFold(fields[0], "none") {
		return nil, nil
	}
	if len(fields) == 0 {
		return nil, errs.Invalidf("context", "after", "plan item %d says (after) without naming items: write (after 2, 3) or (after none)", n).With("item", n)
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range fields {
		k, err := strconv.Atoi(strings.TrimPrefix(f, "#"))
		if err != nil || k < 1 || k >= n {
			return nil, errs.Invalidf("context", "after", "plan item %d may follow only earlier items (1 to %d), not %q: write (after 2, 3) or (after none)", n, n-1, f).With("item", n)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

// makePlanTasks makes each item of the plan at path a task on board (in
// the caller's project), in order, each depending on the tasks of the items it follows, and returns
// them.
func makePlanTasks(board TaskBoard, phase, path string, items []PlanItem) ([]PlanTask, error) {
	ids := make(map[int]string, len(items))
	out := make([]PlanTask, 0, len(items))
	for _, it := range items {
		deps := make([]string, 0, len(it.After))
		for _, a := range it.After {
			deps = append(deps, ids[a])
		}
		id, err := board.CreateTask(NewTask{
			Item:        it.Number,
			Title:       cut(it.Text, maxTaskTitle),
			Description: fmt.Sprintf("Phase %s plan, %s item %d:\n\n%s", phase, path, it.Number, cut(it.Text, maxTaskText)),
			DependsOn:   deps,
		})
		if err != nil {
			if e, ok := errs.As(err); ok && len(out) > 0 {
				// Say how far it got: the tasks made so far stay, and
				// the same call again (same key) makes only the rest.
				e = e.With("tasks_made", len(out))
				return nil, e
			}
			return nil, err
		}
		ids[it.Number] = id
		out = append(out, PlanTask{Item: it.Number, TaskID: id, DependsOn: deps})
	}
	return out, nil
}

// cut is text cut to at most n characters, an ellipsis marking the cut
// (the plan file keeps the whole item).
func cut(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n-1]) + "…"
}

// taskIDPattern is what a task id of the board looks like; a lease's
// taskId that matches it must name a task that exists.
var taskIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^T-[0-9]+$`) })

// boardTaskID is a task id the board can hold: no leading zero.
var boardTaskID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^T-[1-9][0-9]*$`) })

// workIDPattern is every other taskId a lease may name (a plan item, an
// outside tracker's id): one word of letters, digits and . _ : / # -.
var workIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._:/#-]*$`) })

// checkLeaseTask checks a lease's taskId: a task id (T-<n>) must name a
// task on board (when the engine's caller has one); anything else must be
// one word.
func checkLeaseTask(board TaskBoard, id string) error {
	if taskIDPattern().MatchString(id) {
		if !boardTaskID().MatchString(id) {
			return errs.NotFoundf(errs.TaskNotFound, "taskId", "no task %s: task ids have no leading zero (task_list shows them)", id)
		}
		if board == nil {
			return nil
		}
		return board.CheckTask(id)
	}
	if !workIDPattern().MatchString(id) {
		return errs.Invalidf("taskId", "pattern", "taskId %q is not an id: name a task (T-12) or a work item in one word of letters, digits and . _ : / # - (plan-3, ENG-42)", id)
	}
	return nil
}
