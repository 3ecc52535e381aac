package engine

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TestPlanItems: a plan's items follow the one before, unless an "(after
// …)" reference names earlier items or none; the reference leaves the
// item's text; a reference to a later item, to itself or to nothing is a
// 400 naming context.
func TestPlanItems(t *testing.T) {
	t.Parallel()
	items, err := planItems("Objective\n- A\n* B (after none)\n- [ ] C (After 1, #2)\n- D (after 3 3)\nsuccess: done")
	if err != nil {
		t.Fatal(err)
	}
	want := []PlanItem{{1, "A", nil}, {2, "B", nil}, {3, "C", []int{1, 2}}, {4, "D", []int{3}}}
	if fmt.Sprint(items) != fmt.Sprint(want) {
		t.Fatalf("items %v, want %v", items, want)
	}
	if items, err := planItems(""); err != nil || len(items) != 5 || fmt.Sprint(items[4].After) != "[4]" {
		t.Fatalf("the default steps: %v %v", items, err)
	}
	long := strings.Repeat("x", 9000)
	if got := cut(long, maxTaskText); utf8.RuneCountInString(got) != maxTaskText || !strings.HasSuffix(got, "…") {
		t.Fatalf("a long item's text is cut to %d characters", utf8.RuneCountInString(got))
	}
	if got := cut("short", maxTaskTitle); got != "short" {
		t.Fatalf("a short text was cut to %q", got)
	}
	for _, bad := range []string{strings.Repeat("- a\n", maxPlanTasks+1), "- A (after 1)", "- A\n- B (after 2)", "- A\n- B (after 3)", "- A\n- B (after 0)", "- A\n- B (after one)", "- A\n- B (after)", "- A\n- (after 1)"} {
		_, err := planItems(bad)
		if e, ok := errs.As(err); !ok || e.Status != 400 || e.Details["field"] != "context" {
			t.Errorf("%q: %v, want a 400 naming context", bad, err)
		}
	}
}

// TestCheckLeaseTaskWithoutABoard: without a board, task ids are taken on
// trust but still must be ids; other work ids must be one word.
func TestCheckLeaseTaskWithoutABoard(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]int{"T-12": 0, "T-0": 404, "T-012": 404, "plan-3": 0, "ENG-42": 0, "vision.0a": 0, "write docs": 400, "-x": 400, "a\tb": 400} {
		err := checkLeaseTask(nil, id)
		got := 0
		if e, ok := errs.As(err); ok {
			got = e.Status
			if e.Details["field"] != "taskId" {
				t.Errorf("%q: %v does not name taskId", id, e)
			}
		}
		if got != want {
			t.Errorf("%q: %v, want status %d", id, err, want)
		}
	}
}
