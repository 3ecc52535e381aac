package core

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/importedtext"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// A text over its field's limit is kept whole in the task's thought
// trail, in discovery records within the content limit whose parts, in
// chain order, give the text back; the chain verifies (docs/decisions.md
// D41).
func TestImportKeepsLongTextsInTheTrail(t *testing.T) {
	t.Parallel()
	st, svc := wired(t)
	var b strings.Builder
	for i := 0; b.Len() < 18_738; i++ {
		b.WriteString("ünïcode paragraph ")
	}
	long := b.String()
	in := []importer.Task{{Key: "7", Source: "7", Where: importer.Where{File: "tasks.json", Line: 3}, Title: "long", Description: &long}}
	ids := map[string]string{}
	out, err := svc.ImportFrom(tasks.Call{Actor: "op"}, "imp", importer.Tasks(in), tasks.ImportOptions{Format: "taskmaster"}, func(k, id string) error {
		ids[k] = id
		return nil
	})
	if err != nil || out.Imported != 1 || out.Changes != 1 {
		t.Fatalf("import: %+v %v", out, err)
	}
	aud := audit.New(st, audit.Config{})
	verify := true
	list, err := aud.List(audit.ListInput{TaskID: &[]string{ids["7"]}[0], VerifyChain: &verify})
	if err != nil {
		t.Fatal(err)
	}
	if list.ChainValid == nil || !*list.ChainValid || len(list.Thoughts) < 4 {
		t.Fatalf("%d records, chain valid %v", len(list.Thoughts), list.ChainValid)
	}
	var whole strings.Builder
	for i, th := range list.Thoughts {
		head, part, ok := strings.Cut(th.Content, "\n\n")
		if !ok || th.Type != "discovery" || !strings.HasPrefix(head, importedtext.Heading+": description (part ") || len([]rune(th.Content)) > audit.MaxContentLen {
			t.Fatalf("record %d: %s %q (%d characters)", i, th.Type, head, len([]rune(th.Content)))
		}
		whole.WriteString(part)
	}
	if whole.String() != long {
		t.Fatalf("the trail holds %d bytes, the text %d", whole.Len(), len(long))
	}
	got, err := svc.Get(tasks.GetInput{TaskID: ids["7"], IncludeThoughtTrail: &verify})
	if err != nil || len(got.ThoughtTrail) != len(list.Thoughts) || got.Source == nil || got.Source.ID != "7" {
		t.Fatalf("task_get: %+v %v", got, err)
	}
}
