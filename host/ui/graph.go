package ui

// The dependency graph page (docs/decisions.md D45): a project's tasks and
// their depends_on edges, drawn on the server as SVG, the longest open path
// marked and listed.

import (
	"html/template"
	"net/http"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// graphMaxTasks bounds the tasks one graph draws: each costs a task_get
// for its dependencies, and a drawing of more is no longer read.
const graphMaxTasks = 1000

// graphView is the graph page's data.
type graphView struct {
	Project  string
	Tasks    int
	Total    int
	Edges    int
	SVG      template.HTML
	Longest  []taskRef
	Statuses []string
}

func (s *Server) graphData(r *http.Request, g Grant) (any, *errs.Error) {
	v := graphView{Project: projectOf(r, g)}
	if v.Project == "" {
		return v, nil
	}
	ctx := r.Context()
	listed, total, e := s.projectTasks(ctx, g, v.Project, graphMaxTasks)
	if e != nil {
		return v, e
	}
	deps := s.dependencies(ctx, g, listed)
	tasks := make([]graphTask, 0, len(listed))
	title := map[string]taskRef{}
	for _, t := range listed {
		tasks = append(tasks, graphTask{ID: t.ID, Title: t.Title, Status: t.Status, DependsOn: deps[t.ID]})
		title[t.ID] = taskRef{ID: t.ID, Title: t.Title, Status: t.Status}
	}
	lay := layoutGraph(tasks)
	v.Tasks, v.Total, v.Edges = len(lay.Nodes), total, len(lay.Edges)
	if len(lay.Nodes) > 0 {
		v.SVG = lay.svg(v.Project)
	}
	for _, id := range lay.Longest {
		v.Longest = append(v.Longest, title[id])
	}
	return v, nil
}
