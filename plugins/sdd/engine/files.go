package engine

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// bundled holds the default command and agent files used when the
// workspace has none of its own.
//
//go:embed defaults/commands/*.md defaults/agents/*.md
var bundled embed.FS

// Document kinds: the directory under <Root>/.agents and under defaults.
const (
	kindCommands = "commands"
	kindAgents   = "agents"
)

// maxDocBytes bounds a command or agent file read from the workspace.
const maxDocBytes = 1 << 20

// doc is a command or agent file and where it came from.
type doc struct {
	ID      string
	Content string
	Source  string // "workspace" or "bundled"
	Path    string // root-relative path for workspace files
}

// loadDoc returns the workspace file <Root>/.agents/<kind>/<id>.md, else
// the bundled default; fs.ErrNotExist when neither exists. id must already
// be validated with checkName; field names the input in errors. A
// workspace file that resolves outside the root, is not a regular file or
// has more than one hard link is refused (400), never replaced by the
// bundled default, so the agent learns why its file is not used.
func (e *Engine) loadDoc(kind, id, field string) (*doc, error) {
	rel := ".agents/" + kind + "/" + id + ".md"
	r, err := openRoot(e.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := readRegular(r, rel, maxDocBytes)
	switch {
	case err == nil:
		return &doc{ID: id, Content: string(data), Source: "workspace", Path: rel}, nil
	case isRefusal(err):
		return nil, fsRefusal(field, rel, err)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, errs.Newf(500, errs.Internal, "cannot read %s: %v", rel, err)
	}
	b, err := bundled.ReadFile("defaults/" + kind + "/" + id + ".md")
	if err != nil {
		return nil, fs.ErrNotExist
	}
	return &doc{ID: id, Content: string(b), Source: "bundled"}, nil
}

// docIDs lists the ids of bundled and workspace files of a kind, sorted.
// Workspace entries that cannot be regular files (directories, FIFOs,
// sockets) are not listed; symlinks are, and are checked when read.
func (e *Engine) docIDs(kind string) []string {
	set := map[string]bool{}
	if ents, err := bundled.ReadDir("defaults/" + kind); err == nil {
		for _, en := range ents {
			set[strings.TrimSuffix(en.Name(), ".md")] = true
		}
	}
	for _, en := range e.workspaceEntries(".agents/" + kind) {
		id, ok := strings.CutSuffix(en.Name(), ".md")
		t := en.Type()
		if ok && (t.IsRegular() || t&fs.ModeSymlink != 0) && checkName("id", id) == nil {
			set[id] = true
		}
	}
	return sortedKeys(set)
}

// workspaceEntries lists a directory under the root; nothing when it is
// missing or resolves outside the root.
func (e *Engine) workspaceEntries(rel string) []fs.DirEntry {
	r, err := os.OpenRoot(e.root)
	if err != nil {
		return nil
	}
	defer r.Close()
	d, err := r.Open(rel)
	if err != nil {
		return nil
	}
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	return ents
}

// workspaceHas reports whether rel exists under the root (without
// following a final symlink).
func (e *Engine) workspaceHas(rel string) bool {
	r, err := os.OpenRoot(e.root)
	if err != nil {
		return false
	}
	defer r.Close()
	_, err = r.Lstat(rel)
	return !errors.Is(err, fs.ErrNotExist)
}

// agentIDs are the agents a spawn plan can use.
func (e *Engine) agentIDs() []string { return e.docIDs(kindAgents) }

// planningRel is the planning root relative to the workspace root.
const planningRel = ".planning"

// ensurePlanningRoot creates <Root>/.planning inside r (a .planning
// symlink that leads outside the root is refused: 400 naming field). It
// reports whether the directory was created now.
func ensurePlanningRoot(r *os.Root, field string) (bool, error) {
	created := false
	if _, err := r.Lstat(planningRel); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	if err := r.MkdirAll(planningRel, 0o755); err != nil {
		if err := classify(err); errors.Is(err, errEscapes) {
			return false, fsRefusal(field, planningRel, err)
		}
		return false, errs.Newf(500, errs.Internal, "cannot create the planning root %s: %v", planningRel, err)
	}
	return created, nil
}

// sectionNorm normalizes a section name for comparison: lower case, runs
// of anything but letters and digits become one underscore.
func sectionNorm(s string) string {
	var b strings.Builder
	us := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127 {
			if us && b.Len() > 0 {
				b.WriteByte('_')
			}
			us = false
			b.WriteRune(r)
		} else {
			us = true
		}
	}
	return b.String()
}

// heading is one Markdown ATX heading found outside code fences.
type heading struct {
	level int
	norm  string
	start int // byte offset of the heading line
	body  int // byte offset just after the heading line
}

// headings lists the ATX headings of md, skipping fenced code blocks.
func headings(md string) []heading {
	var out []heading
	inFence := false
	off := 0
	for off < len(md) {
		end := strings.IndexByte(md[off:], '\n')
		next := len(md)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimRight(md[off:next], "\r\n")
		trim := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
		} else if !inFence && len(line)-len(trim) <= 3 && strings.HasPrefix(trim, "#") {
			lvl := len(trim) - len(strings.TrimLeft(trim, "#"))
			rest := trim[lvl:]
			if lvl <= 6 && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "#"))
				title = strings.TrimSuffix(title, ":")
				out = append(out, heading{level: lvl, norm: sectionNorm(title), start: off, body: next})
			}
		}
		off = next
	}
	return out
}

// tagBlock returns the text inside the first <name>...</name> block of md
// (case-insensitive), and whether one exists.
func tagBlock(md, name string) (string, bool) {
	lower := strings.ToLower(md)
	open := "<" + name + ">"
	i := strings.Index(lower, open)
	if i < 0 || len(lower) != len(md) {
		// Lower-casing changed byte offsets (rare non-ASCII): fall back to
		// an exact-case search so offsets stay valid.
		lower = md
		if i = strings.Index(md, open); i < 0 {
			return "", false
		}
	}
	j := strings.Index(lower[i+len(open):], "</"+name+">")
	if j < 0 {
		return "", false
	}
	return strings.TrimSpace(md[i+len(open) : i+len(open)+j]), true
}

// headingSection returns the body under the first heading (level >= minLevel)
// whose normalized title is in names, up to the next heading of the same or
// a higher level.
func headingSection(md string, hs []heading, minLevel int, names ...string) (string, bool) {
	for k, h := range hs {
		if h.level < minLevel || !slices.Contains(names, h.norm) {
			continue
		}
		end := len(md)
		for _, n := range hs[k+1:] {
			if n.level <= h.level {
				end = n.start
				break
			}
		}
		return strings.TrimSpace(md[h.body:end]), true
	}
	return "", false
}

// describeDoc returns a one-line description of a document, taken from
// its objective (or its first paragraph).
func (e *Engine) describeDoc(kind, id string) string {
	d, err := e.loadDoc(kind, id, "id")
	if err != nil {
		return ""
	}
	secs := parseSections(d.Content)
	line := firstLine(secs.Objective)
	if line == "" {
		line = firstLine(stripHeadings(d.Content))
	}
	return line
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-*#>0123456789. "))
		if l != "" && !strings.HasPrefix(l, "<") && !strings.HasPrefix(l, "---") {
			if r := []rune(l); len(r) > 160 {
				l = string(r[:157]) + "..."
			}
			return l
		}
	}
	return ""
}

func stripHeadings(md string) string {
	var b strings.Builder
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
