package ui

// The dependency graph's layout (docs/decisions.md D45): tasks in columns by
// dependency depth, the longest chain of open tasks marked. Pure functions
// of the tasks, so the table tests pin them; graph.go reads the tasks and
// graph_svg.go draws the result.

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/internal/tasklife"
)

// graphTask is one task as the graph needs it.
type graphTask struct {
	ID        string
	Title     string
	Status    string
	DependsOn []string
}

// The layout's measures, in SVG user units (pixels at 100 %). Labels are
// drawn in a 12 px monospace font, whose advance is about 7.2 px; the
// layout counts 7.5 so a label fits its box in any monospace font of
// that size.
const (
	graphPad      = 16
	graphNodeW    = 240
	graphNodeH    = 26
	graphRowGap   = 8
	graphColGap   = 64
	graphSubGap   = 20
	graphMaxRows  = 40 // a layer taller than this wraps into more columns
	graphLabelPad = 8
)

// graphLabelChars is how many characters a node's label holds: its inner
// width over 7.5 px a character.
const graphLabelChars = (graphNodeW - 2*graphLabelPad) * 2 / 15

// placedNode is a task with its box.
type placedNode struct {
	graphTask
	Layer      int
	X, Y, W, H int
	Label      string // what fits in the box: "T-12 title…"
	OnPath     bool
}

// placedEdge is a dependency drawn from the task depended on (From) to the
// task that waits on it (To).
type placedEdge struct {
	From, To string
	D        string // the SVG path
	OnPath   bool
}

// graphLayout is the whole drawing.
type graphLayout struct {
	Width, Height int
	Nodes         []placedNode
	Edges         []placedEdge
	// Longest is the longest open path, first task to last.
	Longest []string
}

// taskNum is a task id's number, for ordering ("T-12" → 12).
func taskNum(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "T-"))
	if err != nil {
		return 0
	}
	return n
}

func byNum(a, b string) int { return cmp.Compare(taskNum(a), taskNum(b)) }

// isOpen reports a task that is still to be done: neither done nor cancelled.
func isOpen(status string) bool { return status != tasklife.Done && status != tasklife.Cancelled }

// knownDeps are a task's dependencies among the tasks drawn, in number
// order (a dependency outside the set, which the core area does not allow
// across projects, is left out).
func knownDeps(t graphTask, byID map[string]graphTask) []string {
	var out []string
	for _, d := range t.DependsOn {
		if _, ok := byID[d]; ok && d != t.ID && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, byNum)
	return out
}

// depths gives each task its layer: 0 without dependencies, else one more
// than its deepest dependency. The core area refuses cycles; should one
// arrive anyway, the edge that closes it counts for nothing.
func depths(tasks []graphTask, byID map[string]graphTask) map[string]int {
	depth := make(map[string]int, len(tasks))
	const visiting = -1
	var visit func(id string) int
	visit = func(id string) int {
		if d, ok := depth[id]; ok {
			if d == visiting {
				return -1
			}
			return d
		}
		depth[id] = visiting
		d := 0
		for _, dep := range knownDeps(byID[id], byID) {
			d = max(d, visit(dep)+1)
		}
		depth[id] = d
		return d
	}
	for _, t := range tasks {
		visit(t.ID)
	}
	return depth
}

// longestOpenPath is the longest chain of open tasks, each depending on
// the one before, through depends_on; ties go to the path with the lower
// task numbers. Nil when no task is open.
func longestOpenPath(tasks []graphTask, byID map[string]graphTask, depth map[string]int) []string {
	order := make([]string, 0, len(tasks))
	for _, t := range tasks {
		order = append(order, t.ID)
	}
	slices.SortFunc(order, func(a, b string) int {
		return cmp.Or(cmp.Compare(depth[a], depth[b]), byNum(a, b))
	})
	best := map[string]int{}
	prev := map[string]string{}
	end := ""
	for _, id := range order {
		t := byID[id]
		if !isOpen(t.Status) {
			continue
		}
		best[id] = 1
		for _, d := range knownDeps(t, byID) {
			if n, ok := best[d]; ok && depth[d] < depth[id] && n+1 > best[id] {
				best[id], prev[id] = n+1, d
			}
		}
		if end == "" || best[id] > best[end] || (best[id] == best[end] && byNum(id, end) < 0) {
			end = id
		}
	}
	if end == "" {
		return nil
	}
	var path []string
	for id := end; id != ""; id = prev[id] {
		path = append(path, id)
	}
	slices.Reverse(path)
	return path
}

// label is what of "T-12 title" fits in a box, cut with an ellipsis.
func label(t graphTask) string {
	s := []rune(t.ID + " " + strings.Join(strings.Fields(t.Title), " "))
	if len(s) <= graphLabelChars {
		return string(s)
	}
	return string(s[:graphLabelChars-1]) + "…"
}

// layoutGraph places the tasks: a column per dependency depth (wrapped into
// more columns past graphMaxRows), each column ordered by where its
// tasks' dependencies sit, then by number; edges run from the right of a
// dependency to the left of the task waiting on it.
func layoutGraph(tasks []graphTask) graphLayout {
	byID := make(map[string]graphTask, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
	}
	depth := depths(tasks, byID)
	layers := map[int][]string{}
	maxLayer := 0
	for _, t := range tasks {
		d := depth[t.ID]
		layers[d] = append(layers[d], t.ID)
		maxLayer = max(maxLayer, d)
	}
	path := longestOpenPath(tasks, byID, depth)
	onPath := map[string]int{}
	for i, id := range path {
		onPath[id] = i + 1
	}

	lay := graphLayout{Longest: path}
	pos := map[string]int{} // index into lay.Nodes
	x, rowsUsed := graphPad, 0
	for d := 0; d <= maxLayer; d++ {
		ids := layers[d]
		if len(ids) == 0 {
			continue
		}
		// Barycentre ordering: a task sits near the tasks it waits on,
		// which keeps edges short and crossings few.
		centre := func(id string) float64 {
			deps := knownDeps(byID[id], byID)
			if len(deps) == 0 {
				return 0
			}
			sum := 0
			for _, dep := range deps {
				sum += lay.Nodes[pos[dep]].Y
			}
			return float64(sum) / float64(len(deps))
		}
		slices.SortStableFunc(ids, func(a, b string) int {
			return cmp.Or(cmp.Compare(centre(a), centre(b)), byNum(a, b))
		})
		cols := (len(ids) + graphMaxRows - 1) / graphMaxRows
		rows := (len(ids) + cols - 1) / cols
		rowsUsed = max(rowsUsed, rows)
		for i, id := range ids {
			t := byID[id]
			col, row := i/rows, i%rows
			n := placedNode{graphTask: t, Layer: d, W: graphNodeW, H: graphNodeH, Label: label(t), OnPath: onPath[id] > 0}
			n.X = x + col*(graphNodeW+graphSubGap)
			n.Y = graphPad + row*(graphNodeH+graphRowGap)
			pos[id] = len(lay.Nodes)
			lay.Nodes = append(lay.Nodes, n)
		}
		x += cols*graphNodeW + (cols-1)*graphSubGap + graphColGap
	}
	lay.Width = max(x-graphColGap+graphPad, 2*graphPad)
	lay.Height = graphPad*2 + max(rowsUsed*(graphNodeH+graphRowGap)-graphRowGap, 0)

	for _, n := range lay.Nodes {
		for _, dep := range knownDeps(n.graphTask, byID) {
			from := lay.Nodes[pos[dep]]
			x1, y1 := from.X+from.W, from.Y+from.H/2
			x2, y2 := n.X, n.Y+n.H/2
			mid := (x1 + x2) / 2
			e := placedEdge{From: dep, To: n.ID, D: "M" + strconv.Itoa(x1) + " " + strconv.Itoa(y1) +
				" C" + strconv.Itoa(mid) + " " + strconv.Itoa(y1) + " " + strconv.Itoa(mid) + " " + strconv.Itoa(y2) + " " + strconv.Itoa(x2) + " " + strconv.Itoa(y2)}
			e.OnPath = onPath[dep] > 0 && onPath[n.ID] == onPath[dep]+1
			lay.Edges = append(lay.Edges, e)
		}
	}
	return lay
}

// overlaps reports whether two placed boxes share any point inside; the
// readability test holds every pair of a large graph to it.
func overlaps(a, b placedNode) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}
