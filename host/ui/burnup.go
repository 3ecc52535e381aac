package ui

// The burn-up page (docs/decisions.md D45): a project's scope and done tasks
// day by day, drawn on the server as SVG, with the numbers in a table.

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// burnMaxTasks bounds the tasks a burn-up reads (task_list pages of 500).
const burnMaxTasks = 20000

// burnupView is the burn-up page's data.
type burnupView struct {
	Project string
	Days    []burnDay
	Last    burnDay
	Tasks   int
	Total   int
	Skipped int
	SVG     template.HTML
}

func (s *Server) burnupData(r *http.Request, g Grant) (any, *errs.Error) {
	v := burnupView{Project: projectOf(r, g)}
	if v.Project == "" {
		return v, nil
	}
	tasks, total, e := s.projectTasks(r.Context(), g, v.Project, burnMaxTasks)
	if e != nil {
		return v, e
	}
	v.Tasks, v.Total = len(tasks), total
	v.Days, v.Skipped = burnupSeries(tasks, s.now(), burnMaxDays)
	if len(v.Days) > 0 {
		v.Last = v.Days[len(v.Days)-1]
		v.SVG = burnupSVG(v.Project, v.Days)
	}
	return v, nil
}

// The plot's measures, in SVG user units.
const (
	burnW      = 960
	burnH      = 360
	burnLeft   = 52
	burnRight  = 20
	burnTop    = 40 // the legend sits above the plot
	burnBottom = 44
	// burnDotsUpTo is the most days drawn with a dot on each point.
	burnDotsUpTo = 62
)

// niceCeil rounds a count up to a round axis maximum: 1, 2 or 5 times a
// power of ten, at least 4 so the ticks stay whole numbers.
func niceCeil(n int) int {
	if n <= 4 {
		return 4
	}
	for step := 1; ; step *= 10 {
		for _, m := range []int{1, 2, 5} {
			if step*m*4 >= n {
				return step * m * 4
			}
		}
	}
}

// burnupSVG draws two lines over the days, scope and done, with the tasks
// done each day as bars; open is the gap between the lines.
func burnupSVG(project string, days []burnDay) template.HTML {
	plotW, plotH := burnW-burnLeft-burnRight, burnH-burnTop-burnBottom
	top := 0
	for _, d := range days {
		top = max(top, d.Scope, d.Done)
	}
	yMax := niceCeil(top)
	x := func(i int) float64 {
		if len(days) == 1 {
			return float64(burnLeft) + float64(plotW)/2
		}
		return float64(burnLeft) + float64(i)*float64(plotW)/float64(len(days)-1)
	}
	y := func(v int) float64 {
		return float64(burnTop) + float64(plotH) - float64(v)*float64(plotH)/float64(yMax)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	var b strings.Builder
	last := days[len(days)-1]
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="burnup" data-burnup viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="burnup-title">`, burnW, burnH, burnW, burnH)
	fmt.Fprintf(&b, `<title id="burnup-title">Burn-up of project %s: scope %d, done %d, open %d on %s</title>`,
		template.HTMLEscapeString(project), last.Scope, last.Done, last.Open(), last.Day.Format("2006-01-02"))
	// Axes and ticks: five on the counts, at most eight dates.
	b.WriteString(`<g class="b-axis">`)
	for i := 0; i <= 4; i++ {
		v := yMax * i / 4
		fmt.Fprintf(&b, `<line class="b-grid" x1="%d" y1="%s" x2="%d" y2="%s"/><text class="b-tick" x="%d" y="%s" text-anchor="end">%d</text>`,
			burnLeft, f(y(v)), burnW-burnRight, f(y(v)), burnLeft-6, f(y(v)+4), v)
	}
	step := max(1, (len(days)+7)/8)
	for i := 0; i < len(days); i += step {
		fmt.Fprintf(&b, `<text class="b-tick" x="%s" y="%d" text-anchor="middle">%s</text>`, f(x(i)), burnH-burnBottom+18, days[i].Day.Format("Jan 2"))
	}
	fmt.Fprintf(&b, `<line class="b-base" x1="%d" y1="%s" x2="%d" y2="%s"/></g>`, burnLeft, f(y(0)), burnW-burnRight, f(y(0)))
	// Done per day, as bars under the lines.
	barW := min(max(1.0, float64(plotW)/float64(len(days))*0.6), 24)
	b.WriteString(`<g class="b-bars">`)
	for i, d := range days {
		if d.DoneThatDay == 0 {
			continue
		}
		fmt.Fprintf(&b, `<rect class="b-bar" x="%s" y="%s" width="%s" height="%s" data-day="%s"><title>%s: %d done</title></rect>`,
			f(x(i)-barW/2), f(y(d.DoneThatDay)), f(barW), f(y(0)-y(d.DoneThatDay)), d.Day.Format("2006-01-02"), d.Day.Format("2006-01-02"), d.DoneThatDay)
	}
	b.WriteString(`</g>`)
	line := func(cls string, val func(burnDay) int) {
		pts := make([]string, len(days))
		for i, d := range days {
			pts[i] = f(x(i)) + "," + f(y(val(d)))
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, cls, strings.Join(pts, " "))
		if len(days) <= burnDotsUpTo { // few days: a dot on each, so one day still shows
			for i, d := range days {
				fmt.Fprintf(&b, `<circle class="%s dot" cx="%s" cy="%s" r="3.5"/>`, cls, f(x(i)), f(y(val(d))))
			}
		}
	}
	line("b-scope", func(d burnDay) int { return d.Scope })
	line("b-done", func(d burnDay) int { return d.Done })
	// The legend, above the plot.
	fmt.Fprintf(&b, `<g class="b-legend"><line class="b-scope" x1="%d" y1="%d" x2="%d" y2="%d"/><text x="%d" y="%d">scope (created)</text>`,
		burnLeft, 16, burnLeft+24, 16, burnLeft+30, 20)
	fmt.Fprintf(&b, `<line class="b-done" x1="%d" y1="%d" x2="%d" y2="%d"/><text x="%d" y="%d">done</text>`,
		burnLeft+160, 16, burnLeft+184, 16, burnLeft+190, 20)
	fmt.Fprintf(&b, `<rect class="b-bar" x="%d" y="%d" width="10" height="10"/><text x="%d" y="%d">done that day</text></g>`,
		burnLeft+250, 11, burnLeft+266, 20)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
