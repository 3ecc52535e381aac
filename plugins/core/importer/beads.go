package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// beadsFile is the file beads keeps its issues in, in its .beads folder.
const beadsFile = "issues.jsonl"

// beads keeps its issues in .beads/issues.jsonl, one issue a line: id
// ("bd-a1b2"), title, description, design, acceptance_criteria, notes,
// status, priority 0 (most urgent) to 4, issue_type, labels, assignee,
// estimated_minutes, created_at/updated_at/closed_at, close_reason,
// dependencies ({issue_id, depends_on_id, type}, issue_id being the line's
// issue) and comments. Of its many other fields none is read.
type beadsIssue struct {
	ID                 *string        `json:"id"`
	Title              *string        `json:"title"`
	Description        string         `json:"description"`
	Design             string         `json:"design"`
	AcceptanceCriteria string         `json:"acceptance_criteria"`
	Notes              string         `json:"notes"`
	Status             string         `json:"status"`
	Priority           *float64       `json:"priority"`
	IssueType          string         `json:"issue_type"`
	Labels             []string       `json:"labels"`
	Assignee           string         `json:"assignee"`
	EstimatedMinutes   *float64       `json:"estimated_minutes"`
	CreatedAt          string         `json:"created_at"`
	UpdatedAt          string         `json:"updated_at"`
	CloseReason        string         `json:"close_reason"`
	ExternalRef        *string        `json:"external_ref"`
	Dependencies       []beadsDep     `json:"dependencies"`
	Comments           []beadsComment `json:"comments"`
}

type beadsDep struct {
	IssueID     string `json:"issue_id"`
	DependsOnID string `json:"depends_on_id"`
	Type        string `json:"type"`
}

type beadsComment struct {
	Author    string `json:"author"`
	Text      string `json:"text"`
	CreatedAt string `json:"created_at"`
}

// beadsStatuses maps beads' statuses onto cairn's: open work is ready
// (todo), deferred work waits in backlog, a hooked issue is being worked
// on, a pinned one stays open, a closed one is done and a tombstone (a
// deleted issue older beads kept) is cancelled.
var beadsStatuses = map[string]string{
	"":            "todo",
	"open":        "todo",
	"in_progress": "in_progress",
	"hooked":      "in_progress",
	"blocked":     "blocked",
	"deferred":    "backlog",
	"pinned":      "todo",
	"closed":      "done",
	"tombstone":   "cancelled",
}

// beadsPriorities maps beads' P0 to P4 onto cairn's four priorities.
var beadsPriorities = []string{"critical", "high", "normal", "low", "low"}

// BeadsBlockedReason is the blocked_reason of an issue beads marked
// blocked, which has none of its own: cairn requires one (D8).
const BeadsBlockedReason = "marked blocked in beads"

// Dependency types of beads and what an import makes of them: blocks is a
// dependency, the first parent-child the parent; every other link (and a
// second parent) is listed in the description's Links section.
const (
	beadsBlocks      = "blocks"
	beadsParentChild = "parent-child"
)

// maxBeadsLine bounds one issue's line: beads keeps an issue's comments
// on its line, so it may be far longer than a cairn task's.
const maxBeadsLine = maxTMValue

// ReadBeads reads beads' issues.jsonl from r, named file in errors.
func ReadBeads(file string, r io.Reader) ([]Task, error) {
	var out []Task
	if err := beadsLines.scan(file, r, strictly(func(t Task) error { out = append(out, t); return nil })); err != nil {
		return nil, err
	}
	return out, nil
}

// beadsLines reads issues.jsonl one issue per line.
var beadsLines = lineFormat{maxLine: maxBeadsLine, item: "issue", idKey: "id", parse: parseBeadsLine}

func parseBeadsLine(w Where, b []byte) (Task, error) {
	var is beadsIssue
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&is); err != nil {
		return Task{}, jsonError(w, err)
	}
	if dec.More() {
		return Task{}, Refuse(w, "", "format", "the line holds more than one JSON value; beads writes one issue object per line")
	}
	if is.ID == nil || *is.ID == "" {
		return Task{}, Refuse(w, "id", "required", "id is required: it names the issue for the dependencies of the others")
	}
	id := *is.ID
	if is.Title == nil {
		return Task{}, Refuse(w, "title", "required", "issue %s has no title", clipText(id))
	}
	t := Task{
		Key: id, Source: id, Where: w, Title: *is.Title, Labels: is.Labels,
		SourceCreated: sourceTime(is.CreatedAt), SourceUpdated: sourceTime(is.UpdatedAt),
	}
	if st, ok := beadsStatuses[is.Status]; ok {
		t.Status = st
		if st == "blocked" {
			t.BlockedReason = ptr(BeadsBlockedReason)
		}
	} else {
		// A custom status (beads' status.custom): the nearest by its name.
		t.mendStatus(Refuse(w, "status", "enum", "issue %s has status %q; beads' statuses are open, in_progress, blocked, deferred, closed, pinned, hooked", clipText(id), clipText(is.Status)),
			w, is.Status, "open, in_progress, blocked, deferred, closed")
	}
	if is.Priority != nil {
		p := *is.Priority
		if p != math.Trunc(p) || p < 0 || int(p) >= len(beadsPriorities) {
			t.mendPriority(Refuse(w, "priority", "enum", "issue %s has priority %v; beads' priorities are 0 (most urgent) to 4", clipText(id), p),
				w, strconv.FormatFloat(p, 'g', -1, 64), "0 (most urgent) to 4")
		} else {
			t.Priority = ptr(beadsPriorities[int(p)])
		}
	}
	if is.IssueType != "" && is.IssueType != "task" {
		t.Labels = append(t.Labels, is.IssueType)
	}
	if is.Assignee != "" {
		t.Assignee = ptr(is.Assignee)
	}
	if is.EstimatedMinutes != nil && *is.EstimatedMinutes > 0 {
		t.EstimateHours = ptr(*is.EstimatedMinutes / 60)
	}
	var links []string
	for i, d := range is.Dependencies {
		field := "dependencies[" + strconv.Itoa(i) + "]"
		if d.DependsOnID == "" {
			return Task{}, Refuse(w, field+".depends_on_id", "required", "dependency %d of issue %s names no issue", i, clipText(id))
		}
		if d.IssueID != "" && d.IssueID != id {
			return Task{}, Refuse(w, field+".issue_id", "const", "dependency %d is on the line of issue %s but says it is issue %s's; beads writes each dependency on its own issue's line", i, clipText(id), clipText(d.IssueID))
		}
		switch {
		case d.Type == beadsBlocks || d.Type == "":
			t.DependsOn = append(t.DependsOn, d.DependsOnID)
		case d.Type == beadsParentChild && t.Parent == "":
			t.Parent = d.DependsOnID
		default:
			links = append(links, "- "+d.Type+": "+d.DependsOnID)
		}
	}
	if is.ExternalRef != nil && *is.ExternalRef != "" {
		links = append(links, "- external: "+*is.ExternalRef)
	}
	if d := beadsDescription(&is, links); d != "" {
		t.Description = ptr(d)
	}
	return t, nil
}

// beadsDescription joins what beads splits: the description, then design,
// acceptance criteria, notes, the close reason, the links an import does
// not make and the comments, each under a heading of its own.
func beadsDescription(is *beadsIssue, links []string) string {
	var parts []string
	add := func(heading, s string) {
		if s = strings.TrimSpace(s); s == "" {
			return
		}
		if heading != "" {
			s = "## " + heading + "\n\n" + s
		}
		parts = append(parts, s)
	}
	add("", is.Description)
	add("Design", is.Design)
	add("Acceptance criteria", is.AcceptanceCriteria)
	add("Notes", is.Notes)
	add("Close reason", is.CloseReason)
	add("Links", strings.Join(links, "\n"))
	var comments []string
	for _, c := range is.Comments {
		head := c.Author
		if c.CreatedAt != "" {
			head = strings.TrimSpace(head + " " + c.CreatedAt)
		}
		text := strings.TrimSpace(c.Text)
		if head != "" {
			text = fmt.Sprintf("**%s**: %s", head, text)
		}
		comments = append(comments, "- "+text)
	}
	add("Comments", strings.Join(comments, "\n"))
	return strings.Join(parts, "\n\n")
}

// clipText shortens echoed input so a hostile value cannot bloat an error.
func clipText(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
