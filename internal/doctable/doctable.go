// Package doctable reads a Markdown table out of a document, so that a test
// can hold the code to a table the documentation shows (docs/security.md's
// table of who may act on an identity, docs/decisions.md D35).
package doctable

import (
	"fmt"
	"os"
	"strings"
)

// Read returns the body rows of the table between the lines
// "<!-- name -->" and "<!-- /name -->" in the file at path: each row split
// into its trimmed cells, the header and the separator row left out.
func Read(path, name string) ([][]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(string(raw), name)
}

// Parse is Read on a document's text.
func Parse(doc, name string) ([][]string, error) {
	open, shut := "<!-- "+name+" -->", "<!-- /"+name+" -->"
	_, rest, ok := strings.Cut(doc, open)
	if !ok {
		return nil, fmt.Errorf("no %s marker", open)
	}
	body, _, ok := strings.Cut(rest, shut)
	if !ok {
		return nil, fmt.Errorf("no %s marker", shut)
	}
	var rows [][]string
	header := true
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
			return nil, fmt.Errorf("table %s: %q is not a table row", name, line)
		}
		cells := strings.Split(line[1:len(line)-1], "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header:
			header = false
		case strings.Trim(strings.Join(cells, ""), "-: ") == "":
			// the separator row
		default:
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("table %s has no rows", name)
	}
	return rows, nil
}
