// Command approvalgate is the smallest plugin that asks for a person's
// approval the way docs/decisions.md D45 fixes it: gate_move answers 428
// ERR_APPROVAL_REQUIRED until gate_approve, an internal tool, recorded an
// approval; gate_get shows what was recorded. The e2e tests of the host's
// approval bridge load it to show the bridge works for any plugin.
package main

import (
	"context"
	"sync"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

type moveIn struct {
	ID string `json:"id" jsonschema:"minLength=1"`
}

type gate struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Decision string `json:"decision,omitempty"`
	Via      string `json:"via,omitempty"`
	Reason   string `json:"reason,omitempty"`
	By       string `json:"by,omitempty"`
	Asked    int    `json:"asked"`
}

type approveIn struct {
	ID           string `json:"id" jsonschema:"minLength=1"`
	Decision     string `json:"decision" jsonschema:"enum=approve,enum=reject"`
	Via          string `json:"via,omitempty"`
	Reason       string `json:"reason,omitempty"`
	CompleteMove bool   `json:"complete_move"`
}

func main() {
	var mu sync.Mutex
	gates := map[string]*gate{}
	get := func(id string) *gate {
		g, ok := gates[id]
		if !ok {
			g = &gate{ID: id, Status: "review"}
			gates[id] = g
		}
		return g
	}
	p := sdk.New("approvalgate", "1.0.0", sdk.WithDescription("A move that waits for a person's approval"))
	sdk.AddTool(p, sdk.Tool[moveIn, gate]{
		Name: "gate_move", Description: "Moves a gate to done once a person approved it.",
		Handler: func(_ context.Context, in moveIn) (gate, error) {
			mu.Lock()
			defer mu.Unlock()
			g := get(in.ID)
			if g.Decision != "approve" {
				g.Asked++
				e := errs.New(428, errs.ApprovalRequired, "gate "+in.ID+" waits for a person's approval: `cairn gate approve "+in.ID+"`")
				e.Details = map[string]any{
					"task_id": in.ID, "project": "p", "mode": "on", "ask_client": true,
					"question": "Approve gate " + in.ID + " (review → done)?",
					"approve":  map[string]any{"tool": "gate_approve", "args": map[string]any{"id": in.ID}},
					"where":    "`cairn gate approve " + in.ID + "`",
				}
				return gate{}, e
			}
			g.Status = "done"
			return *g, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[approveIn, gate]{
		Name: "gate_approve", Description: "Records a person's decision on a gate.", Toolset: sdk.InternalToolset,
		Handler: func(ctx context.Context, in approveIn) (gate, error) {
			mu.Lock()
			defer mu.Unlock()
			g := get(in.ID)
			g.Decision, g.Via, g.Reason, g.By = in.Decision, in.Via, in.Reason, sdk.CallerFrom(ctx).ID
			if in.Decision == "reject" {
				g.Status = "in_progress"
			}
			return *g, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[moveIn, gate]{
		Name: "gate_get", Description: "Shows a gate and the decision recorded on it.", ReadOnly: true,
		Handler: func(_ context.Context, in moveIn) (gate, error) {
			mu.Lock()
			defer mu.Unlock()
			return *get(in.ID), nil
		},
	})
	sdk.Serve(p)
}
