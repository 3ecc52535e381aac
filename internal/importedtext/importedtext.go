// Package importedtext is the one spelling of how an import keeps a text
// longer than its field allows (docs/decisions.md D41): the field holds its
// beginning and ends in a marker, and discovery records of the task's
// thought trail, each starting with a part heading, hold the whole text in
// order. The core area writes both; the markdown export reads them back,
// without the host importing an area.
package importedtext

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Heading starts each record that keeps an imported text; the field's
// name follows it.
const Heading = "imported text"

// TitleMarker ends a title the import cut.
const TitleMarker = " […]"

// DescriptionMarker ends a description the import cut: how many of how
// many characters the field keeps, and where the whole text is.
func DescriptionMarker(kept, whole int) string {
	return fmt.Sprintf("\n\n[… the import kept the first %d of %d characters here; the whole text is in this task's thought trail, in the discovery records %q.]", kept, whole, Heading+": description")
}

// descriptionMarkerEnd is how every description marker ends: a check of it
// spares other texts the expression.
var descriptionMarkerEnd = fmt.Sprintf(" records %q.]", Heading+": description")

// The expressions here compile on first use, not in package init, which
// every cairn process runs (docs/decisions.md D46).

var descriptionMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\n\n\[… the import kept the first ([0-9]+) of ([0-9]+) characters here; the whole text is in this task's thought trail, in the discovery records "` + Heading + `: description"\.\]\z`)
})

// CutDescription reads the marker that ends description d: what the field
// kept before it and the character counts it states; ok is false when d
// ends in no marker.
func CutDescription(d string) (kept string, keptN, wholeN int, ok bool) {
	if !strings.HasSuffix(d, descriptionMarkerEnd) {
		return "", 0, 0, false
	}
	m := descriptionMarker().FindStringSubmatchIndex(d)
	if m == nil {
		return "", 0, 0, false
	}
	keptN, err1 := strconv.Atoi(d[m[2]:m[3]])
	wholeN, err2 := strconv.Atoi(d[m[4]:m[5]])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return d[:m[0]], keptN, wholeN, true
}

// PartHeading starts part i of n of a field's kept text, then a blank line.
func PartHeading(field string, i, n int) string {
	return fmt.Sprintf("%s: %s (part %d of %d)\n\n", Heading, field, i, n)
}

var partHeading = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\A` + Heading + `: (title|description) \(part ([0-9]+) of ([0-9]+)\)\n\n`)
})

// Part reads a record's content: the field, part i of n, and the text
// after the heading; ok is false when content starts with no part heading.
func Part(content string) (field string, i, n int, text string, ok bool) {
	m := partHeading().FindStringSubmatch(content)
	if m == nil {
		return "", 0, 0, "", false
	}
	i, err1 := strconv.Atoi(m[2])
	n, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil || i < 1 || i > n {
		return "", 0, 0, "", false
	}
	return m[1], i, n, content[len(m[0]):], true
}
