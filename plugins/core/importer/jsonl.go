package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// jsonlLine is one line of cairn's JSON Lines form: the fields task_get
// answers with (what `cairn export tasks` writes). The fields a new task
// cannot take — who and when, its number in the project, its project and
// its claim — are read to be accepted and then left out: the import makes
// them again, as task_create does (docs/decisions.md D41).
type jsonlLine struct {
	TaskID        *string   `json:"task_id"`
	Title         *string   `json:"title"`
	Description   *string   `json:"description"`
	ParentID      *string   `json:"parent_id"`
	Status        *string   `json:"status"`
	Priority      *string   `json:"priority"`
	Progress      *float64  `json:"progress"`
	Assignee      *string   `json:"assignee"`
	Labels        []string  `json:"labels"`
	EstimateHours *float64  `json:"estimate_hours"`
	BlockedReason *string   `json:"blocked_reason"`
	DependsOn     []string  `json:"depends_on"`
	Project       *string   `json:"project"`
	CreatedAt     *string   `json:"created_at"`
	UpdatedAt     *string   `json:"updated_at"`
	CreatedBy     *string   `json:"created_by"`
	UpdatedBy     *string   `json:"updated_by"`
	Sequence      *uint64   `json:"sequence"`
	ClaimedBy     *string   `json:"claimed_by"`
	ThoughtTrail  *[]string `json:"thought_trail"`
	// Source is task_get's origin of an exported task; the import's own
	// origin is this line's task_id.
	Source *json.RawMessage `json:"source"`
}

// maxLine bounds one JSON Lines line: a task's longest fields (8,000
// characters of description, 20 labels) fit many times over.
const maxLine = 1 << 20

// ReadJSONL reads cairn's JSON Lines form from r, named file in errors:
// one task object per line, blank lines skipped. Unknown fields are
// refused (a misspelt field would otherwise vanish silently).
func ReadJSONL(file string, r io.Reader) ([]Task, error) {
	var out []Task
	if err := jsonlLines.scan(file, r, strictly(func(t Task) error { out = append(out, t); return nil })); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonlLines reads cairn's JSON Lines form one task per line.
var jsonlLines = lineFormat{maxLine: maxLine, item: "task", idKey: "task_id", parse: parseJSONLLine}

func parseJSONLLine(w Where, b []byte) (Task, error) {
	var l jsonlLine
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Task{}, jsonError(w, err)
	}
	if dec.More() {
		return Task{}, Refuse(w, "", "format", "the line holds more than one JSON value; write one task object per line")
	}
	if l.TaskID == nil || *l.TaskID == "" {
		return Task{}, Refuse(w, "task_id", "required", "task_id is required: it names the task for the parent_id and depends_on of the others")
	}
	if l.Title == nil {
		return Task{}, Refuse(w, "title", "required", "title is required")
	}
	t := Task{
		Key:           *l.TaskID,
		Where:         w,
		Title:         *l.Title,
		Description:   l.Description,
		Priority:      l.Priority,
		Labels:        l.Labels,
		Assignee:      l.Assignee,
		EstimateHours: l.EstimateHours,
		DependsOn:     l.DependsOn,
		Progress:      l.Progress,
		BlockedReason: l.BlockedReason,
		Source:        *l.TaskID,
	}
	if l.CreatedAt != nil {
		t.SourceCreated = *l.CreatedAt
	}
	if l.UpdatedAt != nil {
		t.SourceUpdated = *l.UpdatedAt
	}
	if l.ParentID != nil {
		t.Parent = *l.ParentID
	}
	if l.Status != nil {
		t.Status = *l.Status
	}
	return t, nil
}

// jsonError names the field a decode error is about when it can tell.
func jsonError(w Where, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return Refuse(w, typeErr.Field, "type", "%s must be a JSON %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return Refuse(w, "", "format", "not JSON at byte %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Refuse(w, field, "additionalProperties", "%s is not a task field; docs/cli.md lists the fields a line may hold", field)
	default:
		return Refuse(w, "", "format", "not a JSON object: %v", err)
	}
}

// jsonKind names a Go kind the way a JSON document's author knows it.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "float64", "uint64", "int", "int64":
		return "number"
	case "slice":
		return "array"
	default:
		return k
	}
}
