package tasks

import (
	"fmt"

	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ImportOptions say how an import meets a problem (docs/decisions.md D41).
type ImportOptions struct {
	// Strict refuses the whole input on its first problem and writes
	// nothing; otherwise every task that can be imported is, and each
	// one changed or skipped is reported.
	Strict bool
	// DryRun reads and checks the input and answers the report, writing
	// nothing.
	DryRun bool
	// Format is the source's format, kept in each task's origin.
	Format string
}

// ImportChange is one item of an import's report: a task it changed or
// skipped, where it is in the source, the rule, what the import did and
// how to fix the source.
type ImportChange struct {
	Place  string `json:"place"`
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Action string `json:"action"`
	Fix    string `json:"fix"`
}

// MaxImportReport bounds the report an import answers: an input with a
// million defects answers their counts and the first of them.
const MaxImportReport = 1000

// importReport gathers what an import changed and skipped.
type importReport struct {
	items   []ImportChange
	changes int
	skipped int
	leftOut int
}

func (r *importReport) add(w importer.Where, key, field, rule, action, fix string) {
	r.changes++
	r.put(w, key, field, rule, action, fix)
}

func (r *importReport) put(w importer.Where, key, field, rule, action, fix string) {
	if len(r.items) >= MaxImportReport {
		r.leftOut++
		return
	}
	place := w.String()
	if key != "" { // empty for an item whose id the reader could not read
		place = fmt.Sprintf("%s, task %s", w, clip(key))
	}
	r.items = append(r.items, ImportChange{Place: place, Field: field, Rule: rule, Action: action, Fix: fix})
}

// skip reports a task left out because it breaks a rule the import cannot
// mend (a status cairn lacks, a blocked task without a reason, …).
func (r *importReport) skip(w importer.Where, key string, err error) {
	r.skipped++
	e := errs.From(err)
	field, _ := e.Details["field"].(string)
	rule, _ := e.Details["constraint"].(string)
	if rule == "" {
		rule = e.Code
	}
	r.put(w, key, field, rule, "skipped the task: "+e.Message, "mend the field in the source and import the task again")
}

// skipRead reports an item its reader could not read (importer.Task's
// Skip): err names the place, which the entry gives on its own.
func (r *importReport) skipRead(w importer.Where, key string, err error) {
	r.skipped++
	e := errs.From(err)
	field, _ := e.Details["field"].(string)
	rule, _ := e.Details["constraint"].(string)
	if rule == "" {
		rule = e.Code
	}
	r.put(w, key, field, rule, "skipped the task: "+importer.Reason(err), "mend the item in the source and import it again")
}

// fill puts the report into out.
func (r *importReport) fill(out *ImportOutput) {
	out.Report = r.items
	if out.Report == nil {
		out.Report = []ImportChange{}
	}
	out.Changes, out.Skipped, out.ReportLeftOut = r.changes, r.skipped, r.leftOut
}
