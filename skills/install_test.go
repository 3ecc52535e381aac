package skills_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/cairn-mcp/cairn/skills"
)

func skillFile(version, desc, body string) string {
	return "---\nversion: " + version + "\ndescription: " + desc + "\n---\n\n# " + body + "\n"
}

func skillsDir(root string) string { return filepath.Join(root, ".agents", "skills") }

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInstall(t *testing.T) {
	src := fstest.MapFS{
		"cairn-a/SKILL.md":       {Data: []byte(skillFile("1.0.0", "A.", "x"))},
		"cairn-a/scripts/run.sh": {Data: []byte("#!/bin/sh\n")},
		"cairn-b/SKILL.md":       {Data: []byte(skillFile("1.0.0", "B.", "x"))},
		"other/SKILL.md":         {Data: []byte("not a skill")},
		"README.md":              {Data: []byte("top-level file")},
	}
	root := t.TempDir()
	rep, err := skills.Install(src, root)
	if err != nil {
		t.Fatal(err)
	}
	wantInstalled := []string{
		".agents/skills/cairn-a/SKILL.md",
		".agents/skills/cairn-a/scripts/run.sh",
		".agents/skills/cairn-b/SKILL.md",
	}
	if !slices.Equal(rep.Installed, wantInstalled) || len(rep.Unchanged) != 0 || len(rep.Kept) != 0 {
		t.Fatalf("first install: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(skillsDir(root), "other")); !os.IsNotExist(err) {
		t.Fatal("non-prefixed directory installed")
	}
	if rep.String() != "installed 3, unchanged 0, kept 0" {
		t.Fatalf("String() = %q", rep.String())
	}

	// Idempotent: a second run changes nothing.
	rep, err = skills.Install(src, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Installed) != 0 || !slices.Equal(rep.Unchanged, wantInstalled) || len(rep.Kept) != 0 {
		t.Fatalf("second install: %+v", rep)
	}

	// An edited file is kept; a deleted one is restored.
	edited := filepath.Join(skillsDir(root), "cairn-a", "SKILL.md")
	mine := skillFile("9.9.9", "My local edit.", "mine")
	writeFile(t, edited, mine)
	if err := os.Remove(filepath.Join(skillsDir(root), "cairn-b", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	rep, err = skills.Install(src, root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Kept, []string{".agents/skills/cairn-a/SKILL.md"}) ||
		!slices.Equal(rep.Installed, []string{".agents/skills/cairn-b/SKILL.md"}) ||
		!slices.Equal(rep.Unchanged, []string{".agents/skills/cairn-a/scripts/run.sh"}) {
		t.Fatalf("install over edits: %+v", rep)
	}
	if b, _ := os.ReadFile(edited); string(b) != mine {
		t.Fatal("Install overwrote an edited file")
	}
	leftovers, _ := filepath.Glob(filepath.Join(skillsDir(root), "*", ".cairn-install-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}
}

func TestInstallCanonicalIdempotent(t *testing.T) {
	root := t.TempDir()
	if _, err := skills.Install(skills.FS, root); err != nil {
		t.Fatal(err)
	}
	rep, err := skills.Install(skills.FS, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unchanged) != 24 || len(rep.Installed) != 0 || len(rep.Kept) != 0 {
		t.Fatalf("second canonical install: %v", rep)
	}
}
