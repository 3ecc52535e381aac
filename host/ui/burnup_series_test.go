package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestBurnupSeries(t *testing.T) {
	t.Parallel()
	today := time.Date(2026, 3, 5, 15, 0, 0, 0, time.UTC)
	tk := func(status, created, updated string) listedTask {
		return listedTask{ID: "T-1", Status: status, CreatedAt: created, UpdatedAt: updated}
	}
	type day struct{ scope, done, that int }
	for _, c := range []struct {
		name    string
		tasks   []listedTask
		maxDays int
		want    []day // from the first day shown to today
		skipped int
	}{
		{"nothing", nil, 0, nil, 0},
		{"created and done over days", []listedTask{
			tk("todo", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z"),
			tk("done", "2026-03-01T11:00:00Z", "2026-03-03T09:00:00Z"),
			tk("done", "2026-03-02T11:00:00Z", "2026-03-03T23:59:00Z"),
			tk("in_progress", "2026-03-04T11:00:00Z", "2026-03-05T09:00:00Z"),
		}, 0, []day{{2, 0, 0}, {3, 0, 0}, {3, 2, 2}, {4, 2, 0}, {4, 2, 0}}, 0},
		{"a cancelled task leaves the scope", []listedTask{
			tk("todo", "2026-03-04T10:00:00Z", "2026-03-04T10:00:00Z"),
			tk("cancelled", "2026-03-04T10:00:00Z", "2026-03-05T10:00:00Z"),
		}, 0, []day{{2, 0, 0}, {1, 0, 0}}, 0},
		{"times in other zones count in UTC", []listedTask{
			tk("done", "2026-03-04T23:30:00+02:00", "2026-03-05T01:30:00+02:00"), // both on March 4 in UTC
		}, 0, []day{{1, 1, 1}, {1, 1, 0}}, 0},
		{"done before created (clock skew) counts on the created day", []listedTask{
			tk("done", "2026-03-05T10:00:00Z", "2026-03-04T10:00:00Z"),
		}, 0, []day{{1, 1, 1}}, 0},
		{"unreadable times are skipped", []listedTask{
			tk("todo", "yesterday", ""), tk("done", "2026-03-05T10:00:00Z", "soon"), tk("todo", "2026-03-05T10:00:00Z", ""),
		}, 0, []day{{1, 0, 0}}, 2},
		{"earlier days fold into the first shown", []listedTask{
			tk("done", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"),
			tk("todo", "2026-03-05T10:00:00Z", "2026-03-05T10:00:00Z"),
		}, 2, []day{{1, 1, 0}, {2, 1, 0}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			days, skipped := burnupSeries(c.tasks, today, c.maxDays)
			var got []day
			for _, d := range days {
				got = append(got, day{d.Scope, d.Done, d.DoneThatDay})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || skipped != c.skipped {
				t.Fatalf("days %v skipped %d, want %v skipped %d", got, skipped, c.want, c.skipped)
			}
			if len(days) > 0 && !days[len(days)-1].Day.Equal(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("the last day is %s, want today", days[len(days)-1].Day)
			}
			for i := 1; i < len(days); i++ {
				if !days[i].Day.Equal(days[i-1].Day.AddDate(0, 0, 1)) {
					t.Errorf("day %d is %s after %s: a gap", i, days[i].Day, days[i-1].Day)
				}
			}
		})
	}
}

func TestNiceCeil(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{0: 4, 3: 4, 5: 8, 9: 20, 21: 40, 200: 200, 201: 400, 1234: 2000} {
		if got := niceCeil(n); got != want || got < n || got%4 != 0 {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestBurnupSVGDrawsBothLines(t *testing.T) {
	t.Parallel()
	days, _ := burnupSeries([]listedTask{
		{Status: "done", CreatedAt: "2026-03-01T10:00:00Z", UpdatedAt: "2026-03-02T10:00:00Z"},
		{Status: "todo", CreatedAt: "2026-03-02T10:00:00Z", UpdatedAt: "2026-03-02T10:00:00Z"},
	}, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), 0)
	svg := string(burnupSVG(`<b>p</b>`, days))
	for _, want := range []string{`<polyline class="b-scope"`, `<polyline class="b-done"`, `class="b-bar"`, "scope 2, done 1, open 1", "&lt;b&gt;p"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the plot lacks %q: %s", want, svg)
		}
	}
	if strings.Contains(svg, "<b>") || strings.Contains(svg, "style=") {
		t.Errorf("unescaped text or a style attribute in %s", svg)
	}
}
