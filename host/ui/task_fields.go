package ui

// The task page's fields in words and in a fixed order (docs/decisions.md
// D25): what a person looks for first (status, priority, assignee,
// progress, labels) above the description, then where the task sits and
// when it changed. A key task_get adds later still shows, after these, with
// its name in words, so nothing the tool says is hidden.

import (
	"sort"
	"strings"
	"time"
)

// taskField is one row of a task's fields.
type taskField struct {
	Key   string // task_get's key
	Name  string // in words
	Kind  string // how the page shows Value: text, status, priority, person, progress, labels, project, task, time, hours, source, value
	Value any
	By    string // for a time: who made the change
}

// fieldSpec names a task_get key and how it shows.
type fieldSpec struct {
	key, name, kind, by string
}

// headFields show above the description, tailFields below the related tasks.
var (
	headFields = []fieldSpec{
		{key: "status", name: "Status", kind: "status"},
		{key: "blocked_reason", name: "Blocked because", kind: "text"},
		{key: "priority", name: "Priority", kind: "priority"},
		{key: "assignee", name: "Assignee", kind: "person"},
		{key: "claimed_by", name: "Claimed by", kind: "person"},
		{key: "progress", name: "Progress", kind: "progress"},
		{key: "labels", name: "Labels", kind: "labels"},
	}
	tailFields = []fieldSpec{
		{key: "project", name: "Project", kind: "project"},
		{key: "parent_id", name: "Parent task", kind: "task"},
		{key: "estimate_hours", name: "Estimate", kind: "hours"},
		{key: "created_at", name: "Created", kind: "time", by: "created_by"},
		{key: "updated_at", name: "Updated", kind: "time", by: "updated_by"},
		// Where an imported task came from (docs/decisions.md D41).
		{key: "source", name: "Imported from", kind: "source"},
	}
)

// shownElsewhere are the keys the page shows in their own places: the
// heading, the description, the related tasks and the thought trail.
var shownElsewhere = map[string]bool{
	"task_id": true, "title": true, "description": true, "thought_trail": true,
	"dependents": true, "depends_on": true, "depended_on_by": true,
	"created_by": true, "updated_by": true,
}

// taskFields splits task_get's output into the fields above the
// description and those below, each in its fixed order; empty values are
// left out, and keys the page does not know close the second list,
// alphabetically.
func taskFields(t map[string]any) (head, tail []taskField) {
	known := map[string]bool{}
	pick := func(specs []fieldSpec) []taskField {
		var out []taskField
		for _, f := range specs {
			known[f.key] = true
			v, ok := t[f.key]
			if !ok || empty(v) {
				continue
			}
			by, _ := t[f.by].(string)
			out = append(out, taskField{Key: f.key, Name: f.name, Kind: f.kind, Value: v, By: by})
		}
		return out
	}
	head, tail = pick(headFields), pick(tailFields)
	var rest []string
	for k, v := range t {
		if !known[k] && !shownElsewhere[k] && !empty(v) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		tail = append(tail, taskField{Key: k, Name: words(k), Kind: "value", Value: t[k]})
	}
	return head, tail
}

// empty reports a value not worth a row: absent, "", an empty list or
// object. Zero progress is a value (it says the work has not started).
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// words turns a snake_case key into words: "estimate_hours" → "Estimate hours".
func words(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// when shows an RFC 3339 time in UTC to the minute, or the text as given.
func when(iso string) string {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return iso
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// stringList reads a JSON list of strings (labels, task ids).
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, it := range list {
		if s, ok := it.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
