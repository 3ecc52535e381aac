package backlogmd

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/importedtext"
)

// A text longer than its field allows is cut by cairn's import, which
// keeps the whole of it in the task's thought trail (docs/decisions.md
// D41): the field holds its beginning and ends in a marker, and discovery
// records headed "imported text: <field> (part i of n)" hold the whole
// text, in order. The export writes the whole text back in place of the
// cut one, so that the board read back again cuts it the same way and
// keeps the same text in the trail.

// maxTitleLen is the length of a title the import cut, marker and all.
const maxTitleLen = 256

// CutFields are the fields of t whose text ends in the import's marker:
// "title", "description", or none. Only a task with one needs its trail
// read.
func CutFields(t Task) []string {
	var out []string
	if strings.HasSuffix(t.Title, importedtext.TitleMarker) && utf8.RuneCountInString(t.Title) == maxTitleLen {
		out = append(out, "title")
	}
	if _, _, _, ok := importedtext.CutDescription(t.Description); ok {
		out = append(out, "description")
	}
	return out
}

// Whole is t with each cut field's whole text from trail, the task's
// discovery records in any order: the latest complete run of parts
// 1..n of that field whose text begins with what the field kept and, for
// a description, has as many characters as its marker says. A field
// whose trail holds no such run keeps its cut text.
func Whole(t Task, trail []Record) Task {
	if len(trail) == 0 {
		return t
	}
	recs := append([]Record(nil), trail...)
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].ChainPosition < recs[j].ChainPosition })
	runs := keptTexts(recs)
	for _, f := range CutFields(t) {
		switch f {
		case "title":
			kept := strings.TrimSuffix(t.Title, importedtext.TitleMarker)
			if w, ok := latest(runs["title"], func(w string) bool {
				return strings.HasPrefix(w, kept) && utf8.RuneCountInString(w) > maxTitleLen
			}); ok {
				t.Title = w
			}
		case "description":
			kept, keptN, wholeN, _ := importedtext.CutDescription(t.Description)
			if w, ok := latest(runs["description"], func(w string) bool {
				return strings.HasPrefix(w, kept) && utf8.RuneCountInString(kept) == keptN && utf8.RuneCountInString(w) == wholeN
			}); ok {
				t.Description = w
			}
		}
	}
	return t
}

// keptTexts are the complete runs of parts in recs, by field, oldest
// first: each run's records joined without their headings.
func keptTexts(recs []Record) map[string][]string {
	out := map[string][]string{}
	type run struct {
		next, of int
		text     strings.Builder
	}
	open := map[string]*run{}
	for _, r := range recs {
		field, i, n, text, ok := importedtext.Part(r.Content)
		if !ok {
			continue
		}
		cur := open[field]
		switch {
		case i == 1:
			cur = &run{next: 1, of: n}
			open[field] = cur
		case cur == nil || cur.next != i || cur.of != n:
			// A part out of its run: the run is not whole.
			delete(open, field)
			continue
		}
		cur.text.WriteString(text)
		cur.next++
		if i == n {
			out[field] = append(out[field], cur.text.String())
			delete(open, field)
		}
	}
	return out
}

// latest is the last of texts that ok accepts.
func latest(texts []string, ok func(string) bool) (string, bool) {
	for i := len(texts) - 1; i >= 0; i-- {
		if ok(texts[i]) {
			return texts[i], true
		}
	}
	return "", false
}
