package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/protocol.md's token cost per toolset, beside the per-request choice
// of toolsets (docs/decisions.md D39), is docs/tools.md's model bytes
// divided by 4 and rounded to 100: this keeps it in step with the
// generated figures.
func TestToolsetTokenCostIsCurrent(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	row := regexp.MustCompile(`(?m)^\| (\*\*[a-z]+\*\*(?: \([a-z, ]+\))?|[a-z]+) \| (\d+) \| (\d+) \| (\d+) \|$`)
	budget := map[string][2]string{}
	tools := read("tools.md")
	start := strings.Index(tools, "## Context budget")
	if start < 0 {
		t.Fatal("docs/tools.md has no Context budget section")
	}
	for _, m := range row.FindAllStringSubmatch(tools[start:], -1) {
		budget[m[1]] = [2]string{m[2], m[3]}
	}
	protocol := read("protocol.md")
	start = strings.Index(protocol, "**What each toolset costs a model.**")
	if start < 0 {
		t.Fatal("docs/protocol.md has no token cost table")
	}
	rows := row.FindAllStringSubmatch(protocol[start:], -1)
	if len(rows) != len(budget) || len(rows) == 0 {
		t.Fatalf("docs/protocol.md's token cost table has %d rows, docs/tools.md's context budget %d", len(rows), len(budget))
	}
	for _, m := range rows {
		want, ok := budget[m[1]]
		if !ok || m[2] != want[0] || m[3] != want[1] {
			t.Errorf("docs/protocol.md: %s has %s tools and %s model bytes; docs/tools.md says %v", m[1], m[2], m[3], want)
			continue
		}
		bytes, _ := strconv.Atoi(m[3])
		tokens := (bytes/4 + 50) / 100 * 100
		if m[4] != strconv.Itoa(tokens) {
			t.Errorf("docs/protocol.md: %s ≈ %s tokens, want %d (%d bytes / 4, rounded to 100)", m[1], m[4], tokens, bytes)
		}
	}
}
