package ui

// Where a login lands (docs/decisions.md D25): on the work. The session's
// active project (D24: CAIRN_PROJECT, else the workspace directory's slug)
// is often not where the agents filed their tasks — an agent names the
// project it was told of — and an empty board reads as "nothing happened".
// So the landing board is the session's project when it holds tasks, else
// the project of the task that changed last, else every project.

import (
	"context"
	"net/url"
)

// landing returns the board a login with g opens on. A tool error keeps
// the session's project: the board then shows the error itself.
func (s *Server) landing(ctx context.Context, g Grant) string {
	if g.Project != "" {
		var own struct {
			TotalCount int `json:"total_count"`
		}
		if e := s.call(ctx, g, "task_list", map[string]any{"project": g.Project, "limit": 1}, &own); e != nil || own.TotalCount > 0 {
			return boardURL(g.Project, "")
		}
	}
	var last struct {
		Tasks []struct {
			Project string `json:"project"`
		} `json:"tasks"`
	}
	if e := s.call(ctx, g, "task_list", map[string]any{"limit": 1, "sort_by": "updated", "sort_order": "desc"}, &last); e != nil {
		return boardURL(g.Project, "")
	}
	if len(last.Tasks) == 0 || last.Tasks[0].Project == "" {
		return boardURL("", g.Project)
	}
	return boardURL(last.Tasks[0].Project, g.Project)
}

// boardURL is the board of project ("" for every project); from names the
// session's empty project the login passed over, which the board mentions.
func boardURL(project, from string) string {
	q := url.Values{}
	if project != "" {
		q.Set("project", project)
	}
	if from != "" && from != project {
		q.Set("from", from)
	}
	if len(q) == 0 {
		return "/board"
	}
	return "/board?" + q.Encode()
}
