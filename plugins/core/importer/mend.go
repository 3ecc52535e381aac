package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Mend is one change a reader made to a task so that it can be imported
// (an unknown status mapped, an unknown priority made normal, a bad date
// dropped): where, the field, the rule it broke, what the reader did and
// how to fix the source. A lenient import reports it; a strict one
// answers Refusal, the error the reader would have refused the file with
// (docs/decisions.md D41).
type Mend struct {
	Where   Where
	Field   string
	Rule    string
	Action  string
	Fix     string
	Refusal error
}

// Refusal is what a strict import answers for t: its Skip, or the refusal
// of its first mend; nil when the reader read t as it is.
func (t *Task) Refusal() error {
	if t.Skip != nil {
		return t.Skip
	}
	if len(t.Mended) > 0 {
		return t.Mended[0].Refusal
	}
	return nil
}

func (t *Task) mend(refusal *errs.Error, w Where, action, fix string) {
	field, _ := refusal.Details["field"].(string)
	rule, _ := refusal.Details["constraint"].(string)
	t.Mended = append(t.Mended, Mend{Where: w, Field: field, Rule: rule, Action: action, Fix: fix, Refusal: refusal})
}

// skippedTask is an item a reader could not read: a lenient import skips
// and reports it, a strict one answers err. key is the item's id when the
// reader could tell it, so that a link to it says it was skipped.
func skippedTask(w Where, key string, err error) Task {
	return Task{Key: key, Where: w, Skip: err}
}

// itemError reports whether err, met reading one line or task of a file
// that holds many, leaves the rest readable: a field of the wrong type, a
// missing one, an unknown one. Text that is not JSON (a truncated file)
// is not: the file cannot be read at all and is refused.
func itemError(err error) bool {
	e, ok := errs.As(err)
	if !ok {
		return false
	}
	rule, _ := e.Details["constraint"].(string)
	return rule != "format" && rule != "maxLength" && rule != "readable"
}

// looseKey is the text of the field key of the JSON object b, for an item
// that could not be read as a task; empty when it has none.
func looseKey(b []byte, key string) string {
	var m map[string]json.RawMessage
	if json.NewDecoder(bytes.NewReader(b)).Decode(&m) != nil {
		return ""
	}
	raw, ok := m[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if isNumber(raw) {
		return string(raw)
	}
	return ""
}

// Reason is the message of an import error without the place Refuse puts
// first, for a report entry that names the place on its own.
func Reason(err error) string {
	e := errs.From(err)
	file, _ := e.Details["file"].(string)
	if file == "" {
		return e.Message
	}
	w := Where{File: file}
	if line, ok := e.Details["line"].(int); ok {
		w.Line = line
	}
	field, _ := e.Details["field"].(string)
	if rest, ok := strings.CutPrefix(e.Message, place(w, field)+": "); ok {
		return rest
	}
	return e.Message
}

// statusWords name cairn's statuses by the words other tools' statuses
// use, most telling first: "In Review" is review, "Waiting" blocked.
var statusWords = []struct {
	status string
	words  []string
}{
	{"cancelled", []string{"cancel", "abandon", "wontfix", "won't", "dropped", "rejected", "obsolete"}},
	{"done", []string{"done", "complete", "closed", "finished", "resolved", "shipped", "merged"}},
	{"review", []string{"review", "qa", "testing", "verif", "approval"}},
	{"blocked", []string{"block", "wait", "hold", "stuck"}},
	{"in_progress", []string{"progress", "doing", "wip", "started", "active", "working", "ongoing", "hooked"}},
	{"todo", []string{"todo", "to do", "to-do", "ready", "open", "pending", "next", "planned"}},
	{"backlog", []string{"backlog", "draft", "idea", "later", "deferred", "someday", "icebox", "new"}},
}

// NearestStatus is the cairn status whose words the name of a status
// cairn does not know holds ("In Review" → review, "Waiting on QA" →
// blocked); ok is false, and the status backlog, when it holds none.
func NearestStatus(name string) (status string, ok bool) {
	s := strings.ToLower(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }), " "))
	for _, sw := range statusWords {
		for _, w := range sw.words {
			if strings.Contains(s, w) || strings.Contains(strings.ReplaceAll(s, " ", ""), strings.ReplaceAll(w, " ", "")) {
				return sw.status, true
			}
		}
	}
	return "backlog", false
}

// mendStatus gives t the cairn status nearest name, a status its reader
// does not know, and notes the mend; refusal is what a strict import
// answers, known the statuses the source's tool has.
func (t *Task) mendStatus(refusal *errs.Error, w Where, name, known string) {
	st, ok := NearestStatus(name)
	action := fmt.Sprintf("imported with status %s, the nearest to %q", st, clipText(name))
	if !ok {
		action = fmt.Sprintf("imported with status backlog: %q names no status cairn knows", clipText(name))
	}
	t.Status = st
	if st == "blocked" && t.BlockedReason == nil {
		t.BlockedReason = ptr(fmt.Sprintf("marked %s in the source", clipText(name)))
	}
	t.mend(refusal, w, action, "use one of "+known+" in the source, or set the task's status in cairn after the import")
}

// mendPriority gives t the priority normal in place of name, one its
// reader does not know, and notes the mend.
func (t *Task) mendPriority(refusal *errs.Error, w Where, name, known string) {
	t.Priority = ptr("normal")
	t.mend(refusal, w, fmt.Sprintf("imported with priority normal: %q is not a priority of the source's", clipText(name)),
		"use one of "+known+" in the source, or set the task's priority in cairn after the import")
}

// strictly is yield refusing, as a strict import does, every task a
// reader mended or skipped: for the callers that read a file whole
// (Read, ReadJSONL, …), which answer its tasks as they are or an error.
func strictly(yield func(Task) error) func(Task) error {
	return func(t Task) error {
		if err := t.Refusal(); err != nil {
			return err
		}
		return yield(t)
	}
}
