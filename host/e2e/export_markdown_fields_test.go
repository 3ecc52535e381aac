package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/internal/backlogmd"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
)

// Every task file the markdown export writes reads back, through the
// import's Backlog.md reader, to the task it was written from, whatever
// its text holds: quotes, colons, YAML's indicators, fences, markdown
// headings, spaces at the ends, other scripts (docs/decisions.md D41).
func TestMarkdownFileReadsBackToItsTask(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 7))
	pieces := []string{"a", "Zoë", "日本", " ", "  ", ":", ": ", "#", "# ", "@ann", "'", `"`, "\\", "-", "- ", "---", "\n", "\n\n", "\t",
		"[x]", "{y}", "&z", "*w", "!v", "|", ">", "%", "`code`", "## Description", "<!-- SECTION:DESCRIPTION:BEGIN -->", "\n<!-- SECTION:DESCRIPTION:END -->\n", "<!-- AC:BEGIN -->",
		"null", "true", "12", "1e3", "~", "2025-06-03"}
	text := func(n int, lines bool) string {
		var b strings.Builder
		for range r.IntN(n) + 1 {
			p := pieces[r.IntN(len(pieces))]
			if !lines && strings.ContainsAny(p, "\n\t") {
				continue
			}
			b.WriteString(p)
		}
		return b.String()
	}
	statuses := []string{"backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"}
	priorities := []string{"low", "normal", "high", "critical"}
	for i := range 3000 {
		est := float64(r.IntN(2000)) / 4
		in := backlogmd.Task{
			TaskID: fmt.Sprintf("T-%d", i+1), Title: strings.TrimSpace(text(8, false)), Description: text(20, true),
			Status: statuses[r.IntN(len(statuses))], Priority: priorities[r.IntN(len(priorities))], Progress: float64(r.IntN(101)),
			Assignee: "agent-" + text(2, false), Labels: []string{text(3, false), "x"}, EstimateHours: &est,
		}
		if in.Title == "" {
			in.Title = "t"
		}
		if i%3 == 0 {
			in.ParentID, in.DependsOn = "T-1", []string{"T-2", "T-3"}
		}
		if in.Status == "blocked" {
			in.BlockedReason = text(5, false)
		}
		data := backlogmd.File(in)
		got, err := importer.ParseBacklogFile(backlogmd.Path(in), data)
		if err != nil {
			t.Fatalf("case %d does not read back: %v\n%s", i, err, data)
		}
		desc := ""
		if got.Description != nil {
			desc = *got.Description
		}
		wantPriority := in.Priority
		if !slices.Equal(got.Labels, in.Labels) || got.Title != in.Title || desc != in.Description || *got.Priority != wantPriority ||
			got.Status != in.Status || *got.Assignee != in.Assignee || *got.EstimateHours != est || got.Source != in.TaskID {
			t.Fatalf("case %d read back as %+v\n%s", i, got, data)
		}
		if in.Progress != 0 && *got.Progress != in.Progress || in.Progress == 0 && got.Progress != nil {
			t.Fatalf("case %d progress %v", i, got.Progress)
		}
		if in.Status == "blocked" && in.BlockedReason != "" && *got.BlockedReason != in.BlockedReason {
			t.Fatalf("case %d blocked reason %q", i, *got.BlockedReason)
		}
		if i%3 == 0 && (got.Parent != "t-1" || strings.Join(got.DependsOn, ",") != "t-2,t-3") {
			t.Fatalf("case %d parent %q deps %v", i, got.Parent, got.DependsOn)
		}
	}
}
