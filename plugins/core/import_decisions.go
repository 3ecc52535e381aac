package core

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A Backlog.md board's decisions become thought records of type decision
// on the Decisions task its import creates (importer.DecisionsKey,
// docs/decisions.md D41). They are read and checked before the import
// writes anything; they are recorded once its tasks are in, each as one
// record (more when longer than a record holds), with the file's id,
// title, date and status in the record's metadata for the markdown export.

// DecisionMeta is the metadata key of an imported decision's fields.
const DecisionMeta = "backlog_decision"

// decisionMeta is what an imported decision's records keep of its file.
type decisionMeta struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Date   string `json:"date,omitempty"`
	Status string `json:"status,omitempty"`
	Part   int    `json:"part"`
	Parts  int    `json:"parts"`
	// Empty says the file had no body: the record holds the title.
	Empty bool `json:"empty,omitempty"`
}

// readDecisions reads the decisions of a Backlog.md import: none for
// other formats.
func readDecisions(in ImportInput) ([]importer.Decision, error) {
	if in.Format != importer.FormatBacklog && (in.Format != "" || importer.DetectFormat(in.Path) != importer.FormatBacklog) {
		return nil, nil
	}
	return importer.ReadBacklogDecisions(in.Path)
}

// recordDecisions records the decisions on the Decisions task, taskID.
func recordDecisions(call tasks.Call, svc *audit.Service, taskID string, ds []importer.Decision) error {
	for _, d := range ds {
		parts := d.Parts()
		for i, content := range parts {
			meta, _ := json.Marshal(map[string]decisionMeta{DecisionMeta: {ID: d.ID, Title: d.Title, Date: d.Date, Status: d.Status, Part: i + 1, Parts: len(parts), Empty: d.Body == ""}})
			if _, err := svc.Record(call.Actor, audit.RecordInput{TaskID: taskID, Type: "decision", Content: content, Metadata: meta}); err != nil {
				return importer.At(d.Where, err)
			}
		}
	}
	return nil
}

// decisionsTaskID notes the task id the Decisions task got, from the ids
// an import reports.
func decisionsTaskID(dst *string, report func(key, id string) error) func(key, id string) error {
	return func(key, id string) error {
		if key == importer.DecisionsKey {
			*dst = id
		}
		return report(key, id)
	}
}

// afterImport records the decisions once the tasks are in.
func (c *Area) afterImport(call tasks.Call, out tasks.ImportOutput, decisionsTask string, ds []importer.Decision) error {
	if len(ds) == 0 {
		return nil
	}
	if decisionsTask == "" {
		return errs.Newf(500, errs.Internal, "imported %d tasks into %s, but the Decisions task got no id; its %d decisions are not recorded", out.Imported, out.Project, len(ds))
	}
	svc, err := c.auditSvc()
	if err != nil {
		return err
	}
	return recordDecisions(call, svc, decisionsTask, ds)
}
