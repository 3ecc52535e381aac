package tasks

import (
	"fmt"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/importedtext"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
)

// importedText is an imported text longer than its field allows, kept
// whole in the task's thought trail (docs/decisions.md D41): the field
// holds its beginning and says where the rest is.
type importedText struct {
	Field string `json:"field"`
	Text  string `json:"text"`
}

// cutLong cuts t's title and description to their limits, each ending in
// its marker, and returns the whole texts for the trail. A text that is
// not UTF-8 is left for the checks to refuse.
func cutLong(t *importer.Task) []importedText {
	var out []importedText
	if n := utf8.RuneCountInString(t.Title); n > MaxTitleLen && utf8.ValidString(t.Title) {
		out = append(out, importedText{Field: "title", Text: t.Title})
		t.Title = runePrefix(t.Title, MaxTitleLen-utf8.RuneCountInString(importedtext.TitleMarker)) + importedtext.TitleMarker
	}
	if t.Description != nil {
		d := *t.Description
		if n := utf8.RuneCountInString(d); n > MaxDescriptionLen && utf8.ValidString(d) {
			out = append(out, importedText{Field: "description", Text: d})
			keep := MaxDescriptionLen - utf8.RuneCountInString(importedtext.DescriptionMarker(MaxDescriptionLen, n))
			cut := runePrefix(d, keep) + importedtext.DescriptionMarker(keep, n)
			t.Description = &cut
		}
	}
	return out
}

// runePrefix is the first n characters of s.
func runePrefix(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i]
}

// reportCut reports the texts cutLong cut.
func reportCut(rep *importReport, w importer.Where, key string, cut []importedText) {
	for _, c := range cut {
		limit := MaxDescriptionLen
		if c.Field == "title" {
			limit = MaxTitleLen
		}
		rep.add(w, key, c.Field, "maxLength",
			fmt.Sprintf("kept the first part of the %d characters in the field (at most %d) and the whole text in the task's thought trail (%q)", utf8.RuneCountInString(c.Text), limit, importedtext.Heading+": "+c.Field),
			fmt.Sprintf("nothing is lost; to have the whole text in the field, shorten it to %d characters in the source", limit))
	}
}
