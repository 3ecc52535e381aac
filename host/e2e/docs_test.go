package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/tools.md is generated from the registered schemas; this keeps the
// committed reference in step with the code.
func TestToolReferenceIsCurrent(t *testing.T) {
	w := newWorkspace(t)
	out := filepath.Join(w.root, "tools.md")
	if code, _, stderr := runCairn(t, w, "", nil, "tools", "--markdown", "--out", out); code != 0 {
		t.Fatalf("cairn tools --markdown: %d\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("docs/tools.md is stale: run `make tools-doc` and commit the result")
	}
}

// The design record cited by code and docs is docs/decisions.md; no file may
// cite a document outside the repository in its place (docs/decisions.md
// D34). Every "docs/decisions.md D<n>" citation, and every link to a section
// of decisions.md, must name a decision that has a section there.
func TestDecisionCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	record, err := os.ReadFile(filepath.Join(root, "docs", "decisions.md"))
	if err != nil {
		t.Fatal(err)
	}
	decisions, anchors := decisionSections(t, record)

	// Built in two parts so that this file does not trip its own check.
	outside := "PRODUCT" + ".md"
	citation := regexp.MustCompile(`docs/decisions\.md\s*(?://\s*|#\s*)?(D\d+(?:(?:,\s*|\s+and\s+)D\d+)*)`)
	number := regexp.MustCompile(`D(\d+)`)
	link := regexp.MustCompile(`decisions\.md#([A-Za-z0-9_-]+)`)
	tracker := regexp.MustCompile(`(?i)\bissues? ` + `\d+`)
	files := repoFiles(t, root)
	cited := 0
	for _, name := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if fi, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
			continue // deleted in the work tree, a symlink or a submodule
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		text := string(data)
		lineOf := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
		if i := strings.Index(text, outside); i >= 0 {
			t.Errorf("%s:%d cites %s, which is not part of the repository; cite docs/decisions.md D<n> instead", name, lineOf(i), outside)
		}
		if strings.HasSuffix(name, ".go") {
			// The tracker is not part of the repository either.
			if m := tracker.FindStringIndex(text); m != nil {
				t.Errorf("%s:%d cites %q, a tracker entry outside the repository; say what the code does, or cite docs/decisions.md D<n>", name, lineOf(m[0]), text[m[0]:m[1]])
			}
		}
		for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
			for _, n := range number.FindAllStringSubmatch(text[m[2]:m[3]], -1) {
				cited++
				if k, _ := strconv.Atoi(n[1]); !decisions[k] {
					t.Errorf("%s:%d cites docs/decisions.md D%s, which has no section there", name, lineOf(m[2]), n[1])
				}
			}
		}
		for _, m := range link.FindAllStringSubmatchIndex(text, -1) {
			if a := text[m[2]:m[3]]; !anchors[a] {
				t.Errorf("%s:%d links to decisions.md#%s, which is no section heading there", name, lineOf(m[0]), a)
			}
		}
	}
	t.Logf("%d decisions; %d citations of them in %d files", len(decisions), cited, len(files))
	if cited == 0 {
		t.Fatalf("found no docs/decisions.md citation in %d files: is the file list right?", len(files))
	}
}

// decisionSections parses the "## D<n> Title" headings of docs/decisions.md:
// the decision numbers, which must run from D1 up without a gap, and the
// anchors a Markdown renderer gives the headings.
func decisionSections(t *testing.T, record []byte) (map[int]bool, map[string]bool) {
	t.Helper()
	heading := regexp.MustCompile(`(?m)^## D(\d+) (.+)$`)
	notInAnchor := regexp.MustCompile(`[^a-z0-9 _-]`)
	decisions, anchors := map[int]bool{}, map[string]bool{}
	for i, m := range heading.FindAllSubmatch(record, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		if n != i+1 {
			t.Fatalf("docs/decisions.md: heading D%d where D%d was due; decisions are numbered in order and never renumbered", n, i+1)
		}
		decisions[n] = true
		title := strings.ToLower("D" + string(m[1]) + " " + strings.TrimSpace(string(m[2])))
		anchors[strings.ReplaceAll(notInAnchor.ReplaceAllString(title, ""), " ", "-")] = true
	}
	if len(decisions) == 0 {
		t.Fatal("docs/decisions.md has no \"## D<n> Title\" headings")
	}
	return decisions, anchors
}

// repoFiles lists the repository's files (tracked, and new ones not ignored),
// relative to root, with slashes.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	// Not a git checkout (a source archive): walk the tree instead.
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
