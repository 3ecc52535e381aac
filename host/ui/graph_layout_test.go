package ui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLongestOpenPath(t *testing.T) {
	t.Parallel()
	tk := func(id, status string, deps ...string) graphTask {
		return graphTask{ID: id, Title: "task " + id, Status: status, DependsOn: deps}
	}
	for _, c := range []struct {
		name  string
		tasks []graphTask
		want  []string
	}{
		{"no tasks", nil, nil},
		{"all done or cancelled", []graphTask{tk("T-1", "done"), tk("T-2", "cancelled", "T-1")}, nil},
		{"one open task", []graphTask{tk("T-1", "todo")}, []string{"T-1"}},
		{"a chain", []graphTask{tk("T-1", "todo"), tk("T-2", "todo", "T-1"), tk("T-3", "in_progress", "T-2")}, []string{"T-1", "T-2", "T-3"}},
		{"a done link cuts the chain", []graphTask{tk("T-1", "todo"), tk("T-2", "done", "T-1"), tk("T-3", "todo", "T-2"), tk("T-4", "todo", "T-3")}, []string{"T-3", "T-4"}},
		{"the longer branch wins", []graphTask{
			tk("T-1", "todo"), tk("T-2", "todo", "T-1"), tk("T-3", "todo", "T-1"), tk("T-4", "todo", "T-3"), tk("T-5", "backlog", "T-2", "T-4"),
		}, []string{"T-1", "T-3", "T-4", "T-5"}},
		{"ties go to lower numbers", []graphTask{tk("T-1", "todo"), tk("T-2", "todo"), tk("T-3", "todo", "T-1"), tk("T-4", "todo", "T-2")}, []string{"T-1", "T-3"}},
		{"a dependency outside the set is left out", []graphTask{tk("T-1", "todo", "T-99"), tk("T-2", "todo", "T-1")}, []string{"T-1", "T-2"}},
		// The edge that closes a cycle counts for nothing: here T-2's.
		{"a cycle does not loop", []graphTask{tk("T-1", "todo", "T-2"), tk("T-2", "todo", "T-1")}, []string{"T-2", "T-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lay := layoutGraph(c.tasks)
			if !reflect.DeepEqual(lay.Longest, c.want) {
				t.Fatalf("longest open path %v, want %v", lay.Longest, c.want)
			}
			marked := 0
			for _, e := range lay.Edges {
				if e.OnPath {
					marked++
				}
			}
			if want := max(len(c.want)-1, 0); marked != want {
				t.Errorf("%d edges marked on the path, want %d", marked, want)
			}
		})
	}
}

func TestLayoutColumnsFollowDependencyDepth(t *testing.T) {
	t.Parallel()
	lay := layoutGraph([]graphTask{
		{ID: "T-1"}, {ID: "T-2", DependsOn: []string{"T-1"}}, {ID: "T-3", DependsOn: []string{"T-1", "T-2"}}, {ID: "T-4"},
	})
	layer, x := map[string]int{}, map[string]int{}
	for _, n := range lay.Nodes {
		layer[n.ID], x[n.ID] = n.Layer, n.X
	}
	if want := map[string]int{"T-1": 0, "T-2": 1, "T-3": 2, "T-4": 0}; !reflect.DeepEqual(layer, want) {
		t.Fatalf("layers %v, want %v", layer, want)
	}
	if !(x["T-1"] == x["T-4"] && x["T-1"] < x["T-2"] && x["T-2"] < x["T-3"]) {
		t.Errorf("columns do not run left to right by depth: %v", x)
	}
	if len(lay.Edges) != 3 {
		t.Errorf("%d edges, want 3", len(lay.Edges))
	}
	for _, e := range lay.Edges {
		if !strings.HasPrefix(e.D, "M") {
			t.Errorf("edge %s→%s path %q", e.From, e.To, e.D)
		}
	}
}

// TestLayoutIsReadableAt200Tasks holds a 200-task graph of wide layers and
// long chains to what reading needs: no two boxes overlap, every label fits
// its box (at 7.5 px a character of 12 px monospace), and the drawing fits
// within its width and height.
func TestLayoutIsReadableAt200Tasks(t *testing.T) {
	t.Parallel()
	var tasks []graphTask
	statuses := []string{"backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"}
	for i := 1; i <= 200; i++ {
		tk := graphTask{ID: fmt.Sprintf("T-%d", i), Title: fmt.Sprintf("Wire the payment step %d of the checkout through the provider's API", i), Status: statuses[i%len(statuses)]}
		switch {
		case i > 120 && i%3 == 0: // a long chain
			tk.DependsOn, tk.Status = []string{fmt.Sprintf("T-%d", i-3)}, "todo"
		case i > 60:
			tk.DependsOn = []string{fmt.Sprintf("T-%d", (i*7)%60+1), fmt.Sprintf("T-%d", (i*11)%60+1)}
		}
		tasks = append(tasks, tk)
	}
	lay := layoutGraph(tasks)
	if len(lay.Nodes) != 200 {
		t.Fatalf("%d nodes, want 200", len(lay.Nodes))
	}
	for i, a := range lay.Nodes {
		if got := utf8.RuneCountInString(a.Label); float64(got)*7.5 > float64(a.W-2*graphLabelPad) {
			t.Errorf("%s: label %q (%d characters) overflows its %d px box", a.ID, a.Label, got, a.W)
		}
		if a.X < 0 || a.Y < 0 || a.X+a.W > lay.Width || a.Y+a.H > lay.Height {
			t.Errorf("%s at (%d,%d) lies outside the %dx%d drawing", a.ID, a.X, a.Y, lay.Width, lay.Height)
		}
		for _, b := range lay.Nodes[i+1:] {
			if overlaps(a, b) {
				t.Fatalf("%s and %s overlap: %+v %+v", a.ID, b.ID, a, b)
			}
		}
	}
	if rows := (lay.Height - 2*graphPad + graphRowGap) / (graphNodeH + graphRowGap); rows > graphMaxRows {
		t.Errorf("%d rows, want at most %d (tall layers wrap)", rows, graphMaxRows)
	}
	if len(lay.Longest) < 10 {
		t.Errorf("longest open path %v, want the long chain", lay.Longest)
	}
}

func TestGraphSVGEscapesAndLinks(t *testing.T) {
	t.Parallel()
	lay := layoutGraph([]graphTask{{ID: "T-1", Title: `<script>alert(1)</script> & "x"`, Status: "todo"}, {ID: "T-2", Title: "b", Status: "done", DependsOn: []string{"T-1"}}})
	svg := string(lay.svg(`p"><script>`))
	for _, bad := range []string{"<script>", `"x"`, "style="} {
		if strings.Contains(svg, bad) {
			t.Errorf("the SVG holds %q: %s", bad, svg)
		}
	}
	for _, want := range []string{`href="/task/T-1"`, `class="g-node status-done"`, `class="g-node status-todo on-path"`, "&lt;script&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG lacks %q: %s", want, svg)
		}
	}
}

func TestLabelCutsLongTitles(t *testing.T) {
	t.Parallel()
	if got := label(graphTask{ID: "T-1", Title: "short"}); got != "T-1 short" {
		t.Errorf("label %q", got)
	}
	long := label(graphTask{ID: "T-1234", Title: strings.Repeat("é", 100)})
	if utf8.RuneCountInString(long) != graphLabelChars || !strings.HasSuffix(long, "…") {
		t.Errorf("label %q (%d characters), want %d ending in …", long, utf8.RuneCountInString(long), graphLabelChars)
	}
}
