package ui

// The burn-up series (docs/decisions.md D45): per day, the tasks in scope
// and the tasks done, cumulative, and the tasks finished that day. Open is
// scope minus done.
//
// Where the times come from: task_list gives each task's created_at, its
// status and its updated_at. A task is counted done on the day of its
// updated_at while its status is done, and out of scope from the day of its
// updated_at while cancelled. No tool exposes the time of the move itself;
// updated_at is that time unless the task changed again after the move (a
// label edited on a done task moves its day forward). An imported task
// counts from its import (created_at), not from its source's dates.

import (
	"time"

	"github.com/cairn-mcp/cairn/internal/tasklife"
)

// burnDay is one day of the plot.
type burnDay struct {
	Day         time.Time // midnight UTC
	Scope       int       // created by the end of the day, less those cancelled by then
	Done        int       // done by the end of the day
	DoneThatDay int
}

// Open is what was left to do at the end of the day.
func (d burnDay) Open() int { return d.Scope - d.Done }

// burnMaxDays bounds the days plotted: the last burnMaxDays up to today,
// the earlier ones folded into the first.
const burnMaxDays = 366

func dayOf(iso string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return time.Time{}, false
	}
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true
}

// burnupSeries counts the tasks day by day from the first creation to
// today (or to the last change, if a clock put one later). A task whose
// times do not parse is left out; skipped says how many.
func burnupSeries(tasks []listedTask, today time.Time, maxDays int) (days []burnDay, skipped int) {
	type change struct{ scope, done int }
	at := map[time.Time]*change{}
	add := func(d time.Time, scope, done int) {
		c := at[d]
		if c == nil {
			c = &change{}
			at[d] = c
		}
		c.scope += scope
		c.done += done
	}
	var first, last time.Time
	seen := func(d time.Time) {
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	for _, t := range tasks {
		created, ok := dayOf(t.CreatedAt)
		if !ok {
			skipped++
			continue
		}
		end := created
		if t.Status == tasklife.Done || t.Status == tasklife.Cancelled {
			u, ok := dayOf(t.UpdatedAt)
			if !ok {
				skipped++
				continue
			}
			if u.After(created) {
				end = u
			}
		}
		seen(created)
		seen(end)
		add(created, 1, 0)
		switch t.Status {
		case tasklife.Done:
			add(end, 0, 1)
		case tasklife.Cancelled:
			add(end, -1, 0)
		}
	}
	if first.IsZero() {
		return nil, skipped
	}
	if d, _ := dayOf(today.UTC().Format(time.RFC3339)); d.After(last) {
		last = d
	}
	start := first
	if maxDays > 0 && int(last.Sub(first).Hours()/24)+1 > maxDays {
		start = last.AddDate(0, 0, -(maxDays - 1))
	}
	scope, done := 0, 0
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		c := at[d]
		that := 0
		if c != nil {
			scope += c.scope
			done += c.done
			that = c.done
		}
		if d.Before(start) {
			continue
		}
		days = append(days, burnDay{Day: d, Scope: scope, Done: done, DoneThatDay: that})
	}
	return days, skipped
}
