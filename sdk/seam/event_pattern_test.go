package seam

import (
	"fmt"
	"testing"
)

func TestMatchEventType(t *testing.T) {
	for _, c := range []struct {
		pattern, typ string
		want         bool
	}{
		{"*", "task.created", true},
		{"*", "", true},
		{"task.*", "task.created", true},
		{"task.*", "task.", false},
		{"task.*", "task", false},
		{"task.*", "tasks.created", false},
		{"task.*", "audit.task.created", false},
		{"task.created", "task.created", true},
		{"task.created", "task.updated", false},
		{".*", ".x", false}, // too short to be a category wildcard: exact match only
		{"", "", true},
		{"", "x", false},
	} {
		if got := MatchEventType(c.pattern, c.typ); got != c.want {
			t.Errorf("MatchEventType(%q, %q) = %v, want %v", c.pattern, c.typ, got, c.want)
		}
	}
}

// A pattern is an exact type, "*", or a prefix ending in ".*".
func ExampleMatchEventType() {
	fmt.Println(MatchEventType("task.*", "task.created"), MatchEventType("task.*", "project.created"), MatchEventType("*", "x"))
	// Output: true false true
}
