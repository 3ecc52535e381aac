package skills_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/sdk/errs"
	canon "github.com/cairn-mcp/cairn/skills"
)

// visible is the product's bound (D14) for a change on disk to show in
// skill_list.
const visible = time.Second

// logSink collects the registry's log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) log(msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(append([]any{msg}, kv...)...))
}

func (l *logSink) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func skillFile(version, desc string, caps ...string) string {
	var b strings.Builder
	b.WriteString("---\nversion: " + version + "\ndescription: " + desc + "\n")
	if len(caps) > 0 {
		b.WriteString("capabilities:\n")
		for _, c := range caps {
			b.WriteString("  - " + c + "\n")
		}
	}
	b.WriteString("---\n\n# Body\n")
	return b.String()
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillsDir(root string) string { return filepath.Join(root, ".agents", "skills") }

func writeSkill(t *testing.T, root, dir, content string) {
	t.Helper()
	writeFile(t, filepath.Join(skillsDir(root), dir, "SKILL.md"), content)
}

func open(t *testing.T, root string) (*skills.Registry, *logSink) {
	t.Helper()
	sink := &logSink{}
	r, err := skills.Open(root, sink.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r, sink
}

func list(t *testing.T, r *skills.Registry) []skills.Skill {
	t.Helper()
	got, err := r.List("", "")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func names(ss []skills.Skill) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// eventually polls until cond holds, failing if it does not within the
// visibility bound measured from the call (the change was just made).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll.Within(visible, cond) {
		t.Fatalf("not visible within %v: %s", visible, what)
	}
}

func find(r *skills.Registry, t *testing.T, name string) (skills.Skill, bool) {
	for _, s := range list(t, r) {
		if s.Name == name {
			return s, true
		}
	}
	return skills.Skill{}, false
}

func TestCanonicalSkillsLoad(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rep, err := canon.Install(canon.FS, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Installed) != 24 || len(rep.Kept) != 0 || len(rep.Unchanged) != 0 {
		t.Fatalf("install report %v, want 24 installed", rep)
	}
	r, sink := open(t, root)
	got := list(t, r)
	if len(got) != 24 {
		t.Fatalf("got %d skills, want 24: %v", len(got), names(got))
	}
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("problems with canonical skills: %v", p)
	}
	if len(sink.lines) != 0 {
		t.Errorf("unexpected log lines: %v", sink.lines)
	}
	if !slices.IsSortedFunc(got, func(a, b skills.Skill) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("skills not sorted by name")
	}
	for _, s := range got {
		if want := ".agents/skills/" + s.Name + "/SKILL.md"; s.Path != want {
			t.Errorf("%s: path %q, want %q", s.Name, s.Path, want)
		}
		if s.Version == "" || s.Description == "" || len(s.Capabilities) == 0 {
			t.Errorf("%s: incomplete %+v", s.Name, s)
		}
	}
}

func TestMalformedSkippedAndReported(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"cairn-no-frontmatter":   "# Just a heading\n\nversion: 1.0.0\n",
		"cairn-unclosed":         "---\nversion: 1.0.0\ndescription: x\n",
		"cairn-bad-yaml":         "---\nversion: [1.0.0\ndescription: x\n---\n",
		"cairn-not-a-map":        "---\n- version\n- description\n---\n",
		"cairn-caps-not-list":    "---\nversion: 1.0.0\ndescription: x\ncapabilities: triage\n---\n",
		"cairn-caps-map":         "---\nversion: 1.0.0\ndescription: x\ncapabilities: {a: b}\n---\n",
		"cairn-version-map":      "---\nversion: {major: 1}\ndescription: x\n---\n",
		"cairn-no-version":       "---\ndescription: x\n---\n",
		"cairn-no-description":   "---\nversion: 1.0.0\n---\n",
		"cairn-empty-desc":       "---\nversion: 1.0.0\ndescription: \"  \"\n---\n",
		"cairn-empty-cap":        "---\nversion: 1.0.0\ndescription: x\ncapabilities: [a, \"\"]\n---\n",
		"cairn-empty-file":       "",
		"cairn-invalid-utf8":     "---\nversion: 1.0.0\ndescription: \xff\xfe\n---\n",
		"cairn-frontmatter-late": "\n---\nversion: 1.0.0\ndescription: x\n---\n",
	}
	root := t.TempDir()
	for dir, content := range bad {
		writeSkill(t, root, dir, content)
	}
	if err := os.MkdirAll(filepath.Join(skillsDir(root), "cairn-no-file"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, root, "cairn-good", skillFile("1.2.3", "Good one.", "a"))
	writeSkill(t, root, "cairn-crlf", "\ufeff---\r\nversion: 2.0.0\r\ndescription: CRLF and BOM.\r\n---\r\nbody\r\n")

	r, sink := open(t, root)
	if got := names(list(t, r)); !slices.Equal(got, []string{"cairn-crlf", "cairn-good"}) {
		t.Fatalf("skills %v, want only the two valid ones", got)
	}
	probs := r.Problems()
	want := len(bad) + 1
	if len(probs) != want {
		t.Fatalf("got %d problems, want %d: %+v", len(probs), want, probs)
	}
	for _, p := range probs {
		if !strings.HasPrefix(p.Path, ".agents/skills/cairn-") || !strings.HasSuffix(p.Path, "/SKILL.md") || p.Error == "" {
			t.Errorf("bad problem %+v", p)
		}
		if !sink.contains(p.Path) {
			t.Errorf("problem %s was not logged", p.Path)
		}
	}
}

func TestNonPrefixedIgnored(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	valid := skillFile("1.0.0", "Valid.", "x")
	writeSkill(t, root, "cairn-real", valid)
	for _, d := range []string{"other", "Cairn-upper", "cairn", "cairn-", "xcairn-y", ".cairn-hidden"} {
		writeSkill(t, root, d, valid)
	}
	// A file (not a directory) with the prefix is not a skill either.
	writeFile(t, filepath.Join(skillsDir(root), "cairn-file"), valid)
	// A file other than SKILL.md inside a skill directory is not scanned.
	writeFile(t, filepath.Join(skillsDir(root), "cairn-real", "NOTES.md"), "not frontmatter")

	r, _ := open(t, root)
	if got := names(list(t, r)); !slices.Equal(got, []string{"cairn-real"}) {
		t.Fatalf("skills %v, want [cairn-real]", got)
	}
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("non-prefixed entries reported as problems: %v", p)
	}
}

func TestSymlinkOutsideRootIgnored(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "cairn-evil", "SKILL.md"), skillFile("1.0.0", "Outside.", "x"))
	if err := os.MkdirAll(skillsDir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "cairn-evil"), filepath.Join(skillsDir(root), "cairn-evil")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	writeFile(t, filepath.Join(root, "shared", "cairn-inside", "SKILL.md"), skillFile("1.0.0", "Inside.", "x"))
	if err := os.Symlink(filepath.Join(root, "shared", "cairn-inside"), filepath.Join(skillsDir(root), "cairn-inside")); err != nil {
		t.Fatal(err)
	}
	r, _ := open(t, root)
	if got := names(list(t, r)); !slices.Equal(got, []string{"cairn-inside"}) {
		t.Fatalf("skills %v, want only the in-root symlink", got)
	}
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-alpha", skillFile("1.0.0", "Triage incoming WORK.", "task-triage", "prioritization"))
	writeSkill(t, root, "cairn-beta", skillFile("1.0.0", "Audit the decision trail.", "audit", "decision-trail"))
	writeSkill(t, root, "cairn-gamma", skillFile("1.0.0", "Seal proofs after an audit.", "merkle-proof", "audit"))
	writeSkill(t, root, "cairn-delta", skillFile("1.0.0", "No capabilities at all."))
	r, _ := open(t, root)

	tests := []struct {
		name, search, capability string
		want                     []string
	}{
		{"all", "", "", []string{"cairn-alpha", "cairn-beta", "cairn-delta", "cairn-gamma"}},
		{"name substring", "gam", "", []string{"cairn-gamma"}},
		{"name case-insensitive", "BETA", "", []string{"cairn-beta"}},
		{"description case-insensitive", "incoming work", "", []string{"cairn-alpha"}},
		{"description or name", "audit", "", []string{"cairn-beta", "cairn-gamma"}},
		{"common prefix", "cairn-", "", []string{"cairn-alpha", "cairn-beta", "cairn-delta", "cairn-gamma"}},
		{"search trimmed", "  seal  ", "", []string{"cairn-gamma"}},
		{"no match", "nothing-like-this", "", []string{}},
		{"capability exact", "", "audit", []string{"cairn-beta", "cairn-gamma"}},
		{"capability is not substring", "", "aud", []string{}},
		{"capability is case-sensitive", "", "Audit", []string{}},
		{"both filters", "seal", "audit", []string{"cairn-gamma"}},
		{"both filters disjoint", "triage", "audit", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.List(tc.search, tc.capability)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("List returned nil; want an empty slice")
			}
			if n := names(got); !slices.Equal(n, tc.want) {
				t.Fatalf("got %v, want %v", n, tc.want)
			}
		})
	}
}

func TestListInvalidInput(t *testing.T) {
	t.Parallel()
	r, _ := open(t, t.TempDir())
	for _, tc := range []struct{ field, search, capability string }{
		{"search", strings.Repeat("a", 257), ""},
		{"search", "\xff", ""},
		{"capability", "", strings.Repeat("é", 257)},
	} {
		_, err := r.List(tc.search, tc.capability)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.InvalidInput || e.Status != 400 || e.Details["field"] != tc.field {
			t.Errorf("List(%q, %q) = %v, want 400 ERR_INVALID_INPUT on %s", tc.search, tc.capability, err, tc.field)
		}
	}
}

func TestSkillJSON(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-bare", skillFile("1.0.0", "Bare."))
	r, _ := open(t, root)
	got := list(t, r)
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"cairn-bare","version":"1.0.0","description":"Bare.","capabilities":[],"path":".agents/skills/cairn-bare/SKILL.md"}]`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	empty, _ := skills.Open(t.TempDir(), nil)
	defer empty.Close()
	b, _ = json.Marshal(list(t, empty))
	if string(b) != "[]" {
		t.Fatalf("empty registry JSON %s, want []", b)
	}
}

// Returned slices are copies: a caller cannot change the registry.
func TestListReturnsCopies(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", skillFile("1.0.0", "A.", "x"))
	r, _ := open(t, root)
	got := list(t, r)
	got[0].Capabilities[0] = "mutated"
	if s, _ := find(r, t, "cairn-a"); s.Capabilities[0] != "x" {
		t.Fatal("List exposed the registry's own slice")
	}
}

func TestCloseIdempotent(t *testing.T) {
	t.Parallel()
	r, err := skills.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.List("", ""); err != nil {
		t.Fatal(err)
	}
}

func TestHotReloadEdit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", skillFile("1.0.0", "First.", "x"))
	r, _ := open(t, root)
	var changes atomic.Int32
	r.OnChange(func() { changes.Add(1) })

	writeSkill(t, root, "cairn-a", skillFile("1.1.0", "Second.", "y"))
	eventually(t, "edited version", func() bool {
		s, ok := find(r, t, "cairn-a")
		return ok && s.Version == "1.1.0" && s.Description == "Second." && slices.Equal(s.Capabilities, []string{"y"})
	})
	eventually(t, "OnChange called", func() bool { return changes.Load() > 0 })

	// Breaking the file moves it to Problems; fixing it brings it back.
	writeSkill(t, root, "cairn-a", "---\nversion: [\n---\n")
	eventually(t, "broken file skipped", func() bool {
		_, ok := find(r, t, "cairn-a")
		return !ok && len(r.Problems()) == 1
	})
	writeSkill(t, root, "cairn-a", skillFile("1.2.0", "Fixed.", "x"))
	eventually(t, "fixed file back", func() bool {
		s, ok := find(r, t, "cairn-a")
		return ok && s.Version == "1.2.0" && len(r.Problems()) == 0
	})
}

func TestHotReloadAdd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", skillFile("1.0.0", "A.", "x"))
	r, _ := open(t, root)

	writeSkill(t, root, "cairn-b", skillFile("1.0.0", "B.", "x"))
	eventually(t, "new skill", func() bool { _, ok := find(r, t, "cairn-b"); return ok })

	// A directory created empty and filled later must be picked up too.
	dir := filepath.Join(skillsDir(root), "cairn-c")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	eventually(t, "empty dir reported", func() bool { return len(r.Problems()) == 1 })
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillFile("1.0.0", "C.", "x"))
	eventually(t, "filled dir", func() bool { _, ok := find(r, t, "cairn-c"); return ok && len(r.Problems()) == 0 })
}

func TestHotReloadRemove(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", skillFile("1.0.0", "A.", "x"))
	writeSkill(t, root, "cairn-b", skillFile("1.0.0", "B.", "x"))
	writeSkill(t, root, "cairn-c", skillFile("1.0.0", "C.", "x"))
	r, _ := open(t, root)

	if err := os.Remove(filepath.Join(skillsDir(root), "cairn-a", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "file removal", func() bool { _, ok := find(r, t, "cairn-a"); return !ok })

	if err := os.RemoveAll(filepath.Join(skillsDir(root), "cairn-b")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "directory removal", func() bool { _, ok := find(r, t, "cairn-b"); return !ok })

	// Removing the whole skills directory empties the registry; re-creating
	// it is noticed through the parent watch.
	if err := os.RemoveAll(skillsDir(root)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "skills dir removal", func() bool { return len(list(t, r)) == 0 })
	writeSkill(t, root, "cairn-d", skillFile("1.0.0", "D.", "x"))
	eventually(t, "skills dir re-created", func() bool { _, ok := find(r, t, "cairn-d"); return ok })
}

func TestHotReloadRename(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-old", skillFile("1.0.0", "Old.", "x"))
	r, _ := open(t, root)

	sd := skillsDir(root)
	if err := os.Rename(filepath.Join(sd, "cairn-old"), filepath.Join(sd, "cairn-new")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "directory rename", func() bool {
		return slices.Equal(names(list(t, r)), []string{"cairn-new"})
	})
	// The renamed directory stays watched: an edit inside it shows.
	writeSkill(t, root, "cairn-new", skillFile("2.0.0", "New.", "x"))
	eventually(t, "edit after rename", func() bool {
		s, ok := find(r, t, "cairn-new")
		return ok && s.Version == "2.0.0"
	})
	// Renaming out of the prefix hides the skill; renaming back restores it.
	if err := os.Rename(filepath.Join(sd, "cairn-new"), filepath.Join(sd, "disabled-new")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rename out of prefix", func() bool { return len(list(t, r)) == 0 })
	if err := os.Rename(filepath.Join(sd, "disabled-new"), filepath.Join(sd, "cairn-back")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rename into prefix", func() bool { _, ok := find(r, t, "cairn-back"); return ok })
}

func TestHotReloadAtomicSave(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", skillFile("1.0.0", "A.", "x"))
	r, _ := open(t, root)

	// Editors save by writing a temporary file and renaming it over the
	// original; the watched inode is replaced, not written.
	dir := filepath.Join(skillsDir(root), "cairn-a")
	for i, v := range []string{"1.0.1", "1.0.2", "1.0.3"} {
		tmp := filepath.Join(dir, fmt.Sprintf(".SKILL.md.swp%d", i))
		writeFile(t, tmp, skillFile(v, "Saved.", "x"))
		if err := os.Rename(tmp, filepath.Join(dir, "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		eventually(t, "atomic save "+v, func() bool {
			s, ok := find(r, t, "cairn-a")
			return ok && s.Version == v
		})
	}
	// Backup-style save: the original is renamed away, then a new file written.
	if err := os.Rename(filepath.Join(dir, "SKILL.md"), filepath.Join(dir, "SKILL.md~")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillFile("1.1.0", "Backup save.", "x"))
	eventually(t, "backup-style save", func() bool {
		s, ok := find(r, t, "cairn-a")
		return ok && s.Version == "1.1.0"
	})
}

func TestSkillsDirCreatedAfterOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	r, _ := open(t, root)
	if got := list(t, r); len(got) != 0 {
		t.Fatalf("got %v, want empty", names(got))
	}
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("missing skills dir reported as a problem: %v", p)
	}
	// Create the chain step by step, as `mkdir -p` and an installer would.
	if err := os.Mkdir(filepath.Join(root, ".agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(skillsDir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, root, "cairn-late", skillFile("1.0.0", "Late.", "x"))
	eventually(t, "skill in a later-created dir", func() bool { _, ok := find(r, t, "cairn-late"); return ok })

	// And the whole canonical set installed in one go into a fresh root.
	root2 := t.TempDir()
	r2, _ := open(t, root2)
	if _, err := canon.Install(canon.FS, root2); err != nil {
		t.Fatal(err)
	}
	eventually(t, "24 installed skills", func() bool { return len(list(t, r2)) == 24 })
}

func TestRootCreatedAfterOpen(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "not", "yet")
	r, _ := open(t, root)
	writeSkill(t, root, "cairn-x", skillFile("1.0.0", "X.", "x"))
	eventually(t, "skill under a later-created root", func() bool { _, ok := find(r, t, "cairn-x"); return ok })
}

func TestPollingFallback(t *testing.T) {
	restore := skills.FailWatcher()
	root := t.TempDir()
	writeSkill(t, root, "cairn-a", "---\nversion: [\n---\n")
	r, sink := open(t, root)
	restore()
	if !sink.contains("polling") {
		t.Fatalf("fallback not logged: %v", sink.lines)
	}
	writeSkill(t, root, "cairn-b", skillFile("1.0.0", "B.", "x"))
	eventually(t, "skill added while polling", func() bool { _, ok := find(r, t, "cairn-b"); return ok })
	writeSkill(t, root, "cairn-b", skillFile("1.1.0", "B.", "x"))
	eventually(t, "skill edited while polling", func() bool {
		s, ok := find(r, t, "cairn-b")
		return ok && s.Version == "1.1.0"
	})
	// Several polls have run; the broken file is logged once, not per poll.
	sink.mu.Lock()
	n := 0
	for _, l := range sink.lines {
		if strings.Contains(l, "cairn-a") {
			n++
		}
	}
	sink.mu.Unlock()
	if n != 1 {
		t.Fatalf("problem logged %d times, want once", n)
	}
}
