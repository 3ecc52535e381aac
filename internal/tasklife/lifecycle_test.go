package tasklife_test

import (
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/internal/tasklife"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// The core area enforces the lifecycle the dashboard offers: the two must
// agree on every status and every move, or the board shows moves that
// task_update refuses (or hides ones it allows).
func TestLifecycleMatchesTheCoreArea(t *testing.T) {
	t.Parallel()
	if got := tasklife.Statuses(); !slices.Equal(got, tasks.Statuses) {
		t.Fatalf("statuses %v, the core area has %v", got, tasks.Statuses)
	}
	for _, from := range append(tasks.Statuses, "", "unknown") {
		if got, want := tasklife.Next(from), tasks.AllowedTransitions(from); !slices.Equal(got, want) {
			t.Errorf("moves from %q: %v, the core area allows %v", from, got, want)
		}
		if tasklife.IsStatus(from) != slices.Contains(tasks.Statuses, from) {
			t.Errorf("IsStatus(%q) disagrees with the core area", from)
		}
	}
}

func TestNextIsACopy(t *testing.T) {
	t.Parallel()
	n := tasklife.Next(tasklife.Todo)
	n[0] = "mutated"
	if tasklife.Next(tasklife.Todo)[0] != tasklife.InProgress {
		t.Fatal("Next exposed the state machine to its caller")
	}
	s := tasklife.Statuses()
	s[0] = "mutated"
	if tasklife.Statuses()[0] != tasklife.Backlog {
		t.Fatal("Statuses exposed the list to its caller")
	}
}
