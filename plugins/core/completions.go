package core

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk"
)

// registerCompletions completes the core area's arguments in its resource
// templates and skill prompts (the host routes a completion to the plugin
// owning the prompt or template): task ids by prefix and by title words,
// project slugs, and audit session ids (only finalized ones for a proof).
func (c *Area) registerCompletions() {
	c.p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		switch req.Argument {
		case "task_id":
			svc, err := c.svc()
			if err != nil {
				return nil, true, err
			}
			matches, err := svc.CompleteID(req.Value, completionLimit)
			if err != nil {
				return nil, true, err
			}
			out := make([]string, 0, len(matches))
			for _, m := range matches {
				out = append(out, m.TaskID)
			}
			return out, true, nil
		case "project":
			svc, err := c.svc()
			if err != nil {
				return nil, true, err
			}
			projects, err := svc.ListProjects()
			if err != nil {
				return nil, true, err
			}
			slugs := make([]string, 0, len(projects))
			for _, p := range projects {
				slugs = append(slugs, p.Slug)
			}
			return sdk.MatchPrefix(slugs, req.Value), true, nil
		case "session_id":
			svc, err := c.auditSvc()
			if err != nil {
				return nil, true, err
			}
			proof := req.Ref.RefType == "resource" && req.Ref.Name == ProofURIPrefix+"{session_id}"
			ids, err := svc.CompleteSessionID(req.Value, proof, completionLimit)
			return ids, true, err
		}
		return nil, false, nil
	})
}

// completionLimit bounds the candidates one completion collects; the host
// sends the first sdk.MaxCompletions and says more exist.
const completionLimit = 1000
