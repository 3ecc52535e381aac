package resume

import (
	"encoding/json"
	"strconv"

	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// URI prefixes of the core area's resources (plugins/core/resources.go).
const (
	taskURI    = "cairn://tasks/"
	trailURI   = "cairn://trail/"
	projectURI = "cairn://projects/"
)

// Parts is what the brief is packed from, each list most important first:
// tasks claimed first, then by priority and most recent update, each with
// up to DecisionsPerTask decisions newest first.
type Parts struct {
	Agent   string
	Project string
	Tasks   []Task
	// OpenTasks counts the caller's open tasks, beyond those in Tasks.
	OpenTasks   int
	Leases      []leases.Lease
	NextActions []tasks.NextAction
}

// Pack fits p into maxBytes of JSON, most important first (docs/decisions.md
// D39): each task with its newest decision, then the leases, then the
// tasks' older decisions, then the next actions. What does not fit is
// counted in Omitted and, where a resource holds it, linked: the task, its
// trail, the project's task list. Sizes are added up element by element,
// so packing costs one encoding of each element, not of the brief per try.
func Pack(p Parts, maxBytes int) Brief {
	b := Brief{Agent: p.Agent, Project: p.Project, Tasks: []Task{}, Leases: []leases.Lease{},
		NextActions: []tasks.NextAction{}, Omitted: Omitted{Links: []string{}}, MaxBytes: maxBytes, Bytes: maxBytes}
	size := encodedLen(b) // Bytes holds the most digits it will need
	fits := func(delta int) bool {
		if size+delta > maxBytes {
			return false
		}
		size += delta
		return true
	}
	count := func(n *int) { size += digits(*n+1) - digits(*n); *n++ }
	link := func(uri string) {
		for _, l := range b.Omitted.Links {
			if l == uri {
				return
			}
		}
		if fits(encodedLen(uri) + comma(len(b.Omitted.Links))) {
			b.Omitted.Links = append(b.Omitted.Links, uri)
		}
	}
	// Each task with its newest decision.
	var kept []int // index in p.Tasks of each task in b.Tasks
	for i, t := range p.Tasks {
		head := t
		head.Decisions = []Decision{}
		if len(t.Decisions) > 0 {
			head.Decisions = t.Decisions[:1]
		}
		if fits(encodedLen(head) + comma(len(b.Tasks))) {
			b.Tasks = append(b.Tasks, head)
			kept = append(kept, i)
			continue
		}
		count(&b.Omitted.Tasks)
		link(taskURI + t.TaskID)
	}
	for range p.OpenTasks - len(p.Tasks) {
		count(&b.Omitted.Tasks)
	}
	for _, l := range p.Leases {
		if fits(encodedLen(l) + comma(len(b.Leases))) {
			b.Leases = append(b.Leases, l)
			continue
		}
		count(&b.Omitted.Leases)
	}
	// Older decisions, one round per depth so every task gets its second
	// before any gets its third.
	for depth := 1; depth < DecisionsPerTask; depth++ {
		for j, i := range kept {
			src := p.Tasks[i].Decisions
			if depth >= len(src) {
				continue
			}
			t := &b.Tasks[j]
			if fits(encodedLen(src[depth]) + comma(len(t.Decisions))) {
				t.Decisions = src[:len(t.Decisions)+1]
				continue
			}
			count(&b.Omitted.Decisions)
			link(trailURI + t.TaskID)
		}
	}
	for _, n := range p.NextActions {
		if fits(encodedLen(n) + comma(len(b.NextActions))) {
			b.NextActions = append(b.NextActions, n)
			continue
		}
		count(&b.Omitted.NextActions)
		if p.Project != "" {
			link(projectURI + p.Project)
		}
	}
	// Bytes is the brief's own size; it has at most the digits of
	// maxBytes, which the count above reserved.
	b.Bytes = size
	for range 3 {
		n := encodedLen(b)
		if n == b.Bytes {
			break
		}
		b.Bytes = n
	}
	return b
}

func encodedLen(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(raw)
}

// comma is the separator an array with n elements needs before one more.
func comma(n int) int {
	if n > 0 {
		return 1
	}
	return 0
}

func digits(n int) int { return len(strconv.Itoa(n)) }
