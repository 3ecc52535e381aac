package backlogmd

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A text longer than its field allows is cut by cairn's import, which
// keeps the whole of it in the task's thought trail (docs/decisions.md
// D41): the field holds its beginning and ends in a marker, and discovery
// records headed "imported text: <field> (part i of n)" hold the whole
// text, in order. The export writes the whole text back in place of the
// cut one, so that the board read back again cuts it the same way and
// keeps the same text in the trail.

// The shapes below are the core area's (plugins/core/tasks/importtext.go,
// plugins/core/audit/imported.go); host/e2e holds them to it.
const (
	// maxTitleLen is the length of a title the import cut, marker and all.
	maxTitleLen = 256
	// titleMarker ends a title the import cut.
	titleMarker = " […]"
	// importedHeading starts each trail record of a kept text.
	importedHeading = "imported text"
)

// descriptionMarker ends a description the import cut: how many of how
// many characters it keeps.
var descriptionMarker = regexp.MustCompile(`\n\n\[… the import kept the first ([0-9]+) of ([0-9]+) characters here; the whole text is in this task's thought trail, in the discovery records "` + importedHeading + `: description"\.\]\z`)

// descriptionMarkerEnd is how descriptionMarker ends: a check of it spares
// the others the expression.
const descriptionMarkerEnd = ` records "` + importedHeading + `: description".]`

// partHeading is the head of one trail record of a kept text.
var partHeading = regexp.MustCompile(`\A` + importedHeading + `: (title|description) \(part ([0-9]+) of ([0-9]+)\)\n\n`)

// CutFields are the fields of t whose text ends in the import's marker:
// "title", "description", or none. Only a task with one needs its trail
// read.
func CutFields(t Task) []string {
	var out []string
	if strings.HasSuffix(t.Title, titleMarker) && utf8.RuneCountInString(t.Title) == maxTitleLen {
		out = append(out, "title")
	}
	if strings.HasSuffix(t.Description, descriptionMarkerEnd) && descriptionMarker.MatchString(t.Description) {
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
			kept := strings.TrimSuffix(t.Title, titleMarker)
			if w, ok := latest(runs["title"], func(w string) bool {
				return strings.HasPrefix(w, kept) && utf8.RuneCountInString(w) > maxTitleLen
			}); ok {
				t.Title = w
			}
		case "description":
			m := descriptionMarker.FindStringSubmatchIndex(t.Description)
			kept := t.Description[:m[0]]
			keptN, _ := strconv.Atoi(t.Description[m[2]:m[3]])
			wholeN, _ := strconv.Atoi(t.Description[m[4]:m[5]])
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
		m := partHeading.FindStringSubmatch(r.Content)
		if m == nil {
			continue
		}
		field := m[1]
		i, err1 := strconv.Atoi(m[2])
		n, err2 := strconv.Atoi(m[3])
		if err1 != nil || err2 != nil || i < 1 || i > n {
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
		cur.text.WriteString(r.Content[len(m[0]):])
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
