// Package tasklife is the task lifecycle of cairn's task board: the
// statuses in order and the moves each allows (the state machine of the
// task spec's part 3). It sits outside plugins/ so that the core area,
// which enforces it, and the host's dashboard, which offers only the moves
// it allows, read one definition without the host importing the area.
package tasklife

import "slices"

// Statuses, in lifecycle order. New tasks are Backlog.
const (
	Backlog    = "backlog"
	Todo       = "todo"
	InProgress = "in_progress"
	Blocked    = "blocked"
	Review     = "review"
	Done       = "done"
	Cancelled  = "cancelled"
)

// statuses lists every status in lifecycle order.
var statuses = []string{Backlog, Todo, InProgress, Blocked, Review, Done, Cancelled}

// moves is the state machine: the statuses a task may move to from each.
var moves = map[string][]string{
	Backlog:    {Todo, Cancelled},
	Todo:       {InProgress, Blocked, Cancelled},
	InProgress: {Review, Blocked, Cancelled},
	Blocked:    {Todo, InProgress, Cancelled},
	Review:     {Done, Backlog, Blocked, Cancelled},
	Done:       {},
	Cancelled:  {},
}

// Statuses returns every status in lifecycle order.
func Statuses() []string { return slices.Clone(statuses) }

// IsStatus reports whether s is a status.
func IsStatus(s string) bool { return slices.Contains(statuses, s) }

// Next returns the statuses a task in status from may move to (empty for
// the terminal states and for an unknown status).
func Next(from string) []string { return append([]string{}, moves[from]...) }
