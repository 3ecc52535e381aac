package importer

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Backlog.md writes assignees as handles, unquoted: "assignee: @ann" or
// "assignee: [@ann, bob]", which YAML refuses (@ cannot start a plain
// value). Backlog.md quotes them before parsing; so does quoteHandles, line
// by line, so that every line keeps its number for the errors.

// The expressions here compile on first use, not in package init, which
// every cairn process runs (docs/decisions.md D46).

// handleLine matches an assignee or reporter line and splits its value.
var handleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*(?:assignee|reporter):\s*)(.*?)\s*$`) })

// quoteHandles quotes the @handles of the assignee and reporter lines of a
// frontmatter.
func quoteHandles(front []byte) []byte {
	if !bytes.Contains(front, []byte("@")) {
		return front
	}
	lines := strings.Split(string(front), "\n")
	for i, l := range lines {
		cr := strings.HasSuffix(l, "\r")
		m := handleLine().FindStringSubmatch(strings.TrimSuffix(l, "\r"))
		if m == nil {
			continue
		}
		v := m[2]
		switch {
		case strings.HasPrefix(v, "@"):
			v = yamlQuote(v)
		case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
			items := strings.Split(v[1:len(v)-1], ",")
			for j, it := range items {
				if t := strings.TrimSpace(it); strings.HasPrefix(t, "@") {
					items[j] = " " + yamlQuote(t)
				}
			}
			v = "[" + strings.TrimPrefix(strings.Join(items, ","), " ") + "]"
		default:
			continue
		}
		lines[i] = m[1] + v
		if cr {
			lines[i] += "\r"
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// yamlQuote is s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
