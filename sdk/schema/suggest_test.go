package schema

import "testing"

// An unknown argument is matched to the known property meant, and to
// none when nothing is close.
func TestClosestProperty(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		unknown string
		known   []string
		want    string
	}{
		{"key", []string{"keyPath", "kind", "value"}, "keyPath"},
		{"keypath", []string{"keyPath"}, "keyPath"},
		{"key_path", []string{"keyPath", "key"}, "keyPath"},
		{"Key-Path", []string{"keyPath"}, "keyPath"},
		{"titel", []string{"title", "tags"}, "title"},
		{"descripton", []string{"description", "deps"}, "description"},
		{"priorty", []string{"priority", "project"}, "priority"},
		{"Id", []string{"taskId", "id"}, "id"},
		{"path", []string{"keyPath", "paths"}, "paths"},
		{"taskid", []string{"task_id", "taskIds"}, "task_id"},
		{"labels", []string{"label", "labelz"}, "label"},
		// Nothing close: no guess.
		{"zz", []string{"a", "bb"}, ""},
		{"x", []string{"y"}, ""},
		{"id", []string{"taskId"}, ""},
		{"color", []string{"title", "status"}, ""},
		{"anything", nil, ""},
		{"owner", []string{"project", "labels"}, ""},
	} {
		if got := closestProperty(c.unknown, c.known); got != c.want {
			t.Errorf("closestProperty(%q, %v) = %q, want %q", c.unknown, c.known, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
		{"titel", "title", 1}, {"ab", "ba", 1}, {"é", "e", 1}, {"keypath", "keypath", 0},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
