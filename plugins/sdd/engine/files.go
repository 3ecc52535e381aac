package engine

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// errEscapes marks a path that resolves outside the workspace root.
var errEscapes = errors.New("path resolves outside the workspace root")

// doc is a command or agent file and where it came from.
type doc struct {
	ID      string
	Content string
	Source  string // "workspace" or "bundled"
	Path    string // root-relative path for workspace files
}

// loadDoc returns the workspace file <Root>/.agents/<kind>/<id>.md, else
// the bundled default; fs.ErrNotExist when neither exists. id must already
// be validated with checkName; field names the input in errors.
func (e *Engine) loadDoc(kind, id, field string) (*doc, error) {
	rel := filepath.Join(".agents", kind, id+".md")
	data, err := e.readInsideRoot(filepath.Join(e.root, rel))
	switch {
	case err == nil:
		return &doc{ID: id, Content: string(data), Source: "workspace", Path: filepath.ToSlash(rel)}, nil
	case errors.Is(err, errEscapes):
		return nil, errs.Invalidf(field, "path", "%s refuses to follow %s: it resolves outside the workspace root", kind, rel)
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
func (e *Engine) docIDs(kind string) []string {
	set := map[string]bool{}
	if ents, err := bundled.ReadDir("defaults/" + kind); err == nil {
		for _, en := range ents {
			set[strings.TrimSuffix(en.Name(), ".md")] = true
		}
	}
	if ents, err := os.ReadDir(filepath.Join(e.root, ".agents", kind)); err == nil {
		for _, en := range ents {
			id, ok := strings.CutSuffix(en.Name(), ".md")
			if ok && !en.IsDir() && checkName("id", id) == nil {
				set[id] = true
			}
		}
	}
	return sortedKeys(set)
}

// agentIDs are the agents a spawn plan can use.
func (e *Engine) agentIDs() []string { return e.docIDs(kindAgents) }

// readInsideRoot reads a regular file after resolving symlinks, refusing
// any file that resolves outside the workspace root (errEscapes).
func (e *Engine) readInsideRoot(p string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !within(e.realRoot(), real) {
		return nil, errEscapes
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", p, fs.ErrNotExist)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDocBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxDocBytes)
	}
	return data, nil
}

func (e *Engine) realRoot() string {
	if r, err := filepath.EvalSymlinks(e.root); err == nil {
		return r
	}
	return e.root
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// ensurePlanningRoot creates <Root>/.planning and checks it does not
// resolve outside the root (a symlinked .planning could otherwise make
// plan writes escape). It returns the resolved directory and whether it was
// created now.
func (e *Engine) ensurePlanningRoot() (string, bool, error) {
	dir := e.PlanningRoot()
	created := false
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", false, errs.Newf(500, errs.Internal, "cannot create the planning root %s: %v", dir, err)
		}
		created = true
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false, errs.Newf(500, errs.Internal, "cannot resolve the planning root %s: %v", dir, err)
	}
	if !within(e.realRoot(), real) {
		return "", false, errs.Newf(400, errs.InvalidInput, "the planning root %s resolves outside the workspace root; remove the symlink", dir).
			With("field", "phase").With("constraint", "path")
	}
	return real, created, nil
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
