package cli

import (
	"context"

	"github.com/cairn-mcp/cairn/host/internal/backlogmd"
)

// wholeTexts puts back, in each task whose title or description the
// import cut (backlogmd.CutFields), the whole text its thought trail
// keeps (docs/decisions.md D41). Only those tasks cost a call: the others
// are left as task_export wrote them.
func wholeTexts(ctx context.Context, c *areaClient, tasks []backlogmd.Task) error {
	for i, t := range tasks {
		if len(backlogmd.CutFields(t)) == 0 {
			continue
		}
		trail, err := trailRecords(ctx, c, t.TaskID, "discovery")
		if err != nil {
			return err
		}
		tasks[i] = backlogmd.Whole(t, trail)
	}
	return nil
}

// trailRecords reads the task's thought records of type typ, a page of
// thought_record_list at a time, in any order.
func trailRecords(ctx context.Context, c *areaClient, taskID, typ string) ([]backlogmd.Record, error) {
	const page = 500
	var out []backlogmd.Record
	for offset := 0; ; offset += page {
		var res struct {
			TotalCount int                `json:"total_count"`
			Thoughts   []backlogmd.Record `json:"thoughts"`
		}
		args := obj{"task_id": taskID, "type": typ, "limit": page, "offset": offset}
		if _, err := c.call(ctx, "thought_record_list", args, &res); err != nil {
			return nil, err
		}
		out = append(out, res.Thoughts...)
		if len(res.Thoughts) < page || offset+page >= res.TotalCount {
			return out, nil
		}
	}
}
