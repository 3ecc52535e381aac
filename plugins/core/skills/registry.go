// Package skills is cairn's skill registry: it reads the skill files under
// <root>/.agents/skills/cairn-*/SKILL.md, keeps them current with fsnotify,
// and answers skill_list queries. It also installs the canonical skills for
// `cairn init`.
//
// The files on disk are the only source of truth: there is no manifest and no
// cache that outlives the process. The package knows nothing of MCP or gRPC
// so the core plugin, the host and tests can all use it directly.
package skills

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-mcp/cairn/sdk/errs"
	canon "github.com/cairn-mcp/cairn/skills"
)

const (
	// Prefix is the fixed prefix of a skill directory (D1, D14). Directories
	// without it are not skills and are ignored.
	Prefix = canon.Prefix
	// FileName is the skill file inside a skill directory.
	FileName = "SKILL.md"
	// Dir is the skills directory relative to the workspace root.
	Dir = canon.Dir

	// debounce lets a burst of events (an editor's atomic save is four or
	// five) settle into a single rescan, while staying far below the 1 s
	// visibility bound.
	debounce = 100 * time.Millisecond
	// pollInterval is used only when the OS refuses a file watcher (for
	// example the inotify instance limit is reached), so changes still show
	// within one second.
	pollInterval = 400 * time.Millisecond
	// maxQueryLen bounds skill_list's search and capability inputs.
	maxQueryLen = 256
)

// newWatcher is a variable so tests can exercise the polling fallback.
var newWatcher = fsnotify.NewWatcher

// Skill is one entry of the registry, as skill_list returns it.
type Skill struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	// Path is repo-relative with forward slashes, e.g.
	// ".agents/skills/cairn-task-triage/SKILL.md".
	Path string `json:"path"`
	// Arguments and Body serve the skill as an MCP prompt.
	Arguments []Argument `json:"-"`
	Body      string     `json:"-"`
	// Source is the whole SKILL.md as read, served as the skill's resource
	// (docs/decisions.md D14).
	Source string `json:"-"`
}

// Problem is a skill file that could not be loaded. server_health reports
// the registry as degraded while any exist.
type Problem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Registry holds the skills found on disk and keeps them current.
// It is safe for concurrent use.
type Registry struct {
	root      string // absolute workspace root
	skillsDir string // absolute <root>/.agents/skills
	logf      func(msg string, kv ...any)

	mu       sync.RWMutex
	skills   []Skill // sorted by name
	problems []Problem
	onChange []func()

	watcher *fsnotify.Watcher // nil when polling
	watched map[string]bool   // directories currently watched

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Open scans <root>/.agents/skills and starts watching it. A missing skills
// directory is not an error: the registry is empty until the directory
// appears. logger receives one line per skipped file and per watcher
// failure; it may be nil.
func Open(root string, logger func(msg string, kv ...any)) (*Registry, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("skills: resolve root %q: %w", root, err)
	}
	if logger == nil {
		logger = func(string, ...any) {}
	}
	r := &Registry{
		root:      abs,
		skillsDir: filepath.Join(abs, filepath.FromSlash(Dir)),
		logf:      logger,
		watched:   map[string]bool{},
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	w, err := newWatcher()
	if err != nil {
		// A registry that cannot watch still has to honour the 1 s bound,
		// so it falls back to polling rather than failing the host.
		r.logf("skills: file watcher unavailable, polling instead", "error", err.Error())
		r.rescan()
		go r.poll()
		return r, nil
	}
	r.watcher = w
	r.rescan()
	go r.watch()
	return r, nil
}

// Close stops watching. The last snapshot stays readable.
func (r *Registry) Close() error {
	var err error
	r.closeOnce.Do(func() {
		close(r.stop)
		<-r.done
		if r.watcher != nil {
			err = r.watcher.Close()
		}
	})
	return err
}

// OnChange registers fn to run after every rescan that changed the skills or
// the problems. fn runs on the registry's goroutine and must not block.
func (r *Registry) OnChange(fn func()) {
	if fn == nil {
		return
	}
	r.mu.Lock()
	r.onChange = append(r.onChange, fn)
	r.mu.Unlock()
}

// Problems returns the files skipped by the last scan, sorted by path.
func (r *Registry) Problems() []Problem {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.problems)
}

// List returns the skills matching both filters, sorted by name. search is a
// case-insensitive substring of the name or the description; capability must
// equal one declared capability exactly. Empty filters match everything.
// Invalid input yields an *errs.Error with code ERR_INVALID_INPUT.
func (r *Registry) List(search, capability string) ([]Skill, error) {
	if err := checkQuery("search", search); err != nil {
		return nil, err
	}
	if err := checkQuery("capability", capability); err != nil {
		return nil, err
	}
	needle := strings.ToLower(strings.TrimSpace(search))
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Skill, 0, len(r.skills))
	for _, s := range r.skills {
		if needle != "" &&
			!strings.Contains(strings.ToLower(s.Name), needle) &&
			!strings.Contains(strings.ToLower(s.Description), needle) {
			continue
		}
		if capability != "" && !slices.Contains(s.Capabilities, capability) {
			continue
		}
		s.Capabilities = slices.Clone(s.Capabilities)
		out = append(out, s)
	}
	return out, nil
}

func checkQuery(field, v string) error {
	switch {
	case !utf8.ValidString(v):
		return errs.New(400, errs.InvalidInput, field+" must be valid UTF-8").
			With("field", field).With("constraint", "utf8")
	case utf8.RuneCountInString(v) > maxQueryLen:
		return errs.New(400, errs.InvalidInput, fmt.Sprintf("%s must be at most %d characters; shorten it", field, maxQueryLen)).
			With("field", field).With("constraint", fmt.Sprintf("maxLength %d", maxQueryLen))
	}
	return nil
}

// rescan rebuilds the snapshot from disk and notifies subscribers when it
// changed. Watches are reconciled before reading, so a change made while the
// directory is being read raises an event and a further rescan: no update
// can fall between the read and the watch.
func (r *Registry) rescan() {
	r.syncWatches()
	skills, problems := r.scan()
	r.syncWatches()

	r.mu.Lock()
	changed := !reflect.DeepEqual(skills, r.skills) || !reflect.DeepEqual(problems, r.problems)
	for _, p := range problems {
		// Log a problem when it appears or changes, not on every rescan:
		// in polling mode that would be a line per file every 400 ms.
		if !slices.Contains(r.problems, p) {
			r.logf("skills: skipping skill file", "path", p.Path, "error", p.Error)
		}
	}
	r.skills, r.problems = skills, problems
	subs := slices.Clone(r.onChange)
	r.mu.Unlock()

	if changed {
		for _, fn := range subs {
			fn()
		}
	}
}

// scan reads every cairn-* directory; rescan logs the problems it finds.
func (r *Registry) scan() ([]Skill, []Problem) {
	skills := []Skill{}
	problems := []Problem{}
	entries, err := os.ReadDir(r.skillsDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, Problem{Path: Dir, Error: err.Error()})
		}
		return skills, problems
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, Prefix) || len(name) == len(Prefix) {
			continue
		}
		dir := filepath.Join(r.skillsDir, name)
		if !r.isDir(dir) {
			continue
		}
		rel := path.Join(Dir, name, FileName)
		s, err := r.load(dir, name, rel)
		if err != nil {
			problems = append(problems, Problem{Path: rel, Error: err.Error()})
			continue
		}
		skills = append(skills, s)
	}
	slices.SortFunc(skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return skills, problems
}

// isDir reports whether p is a directory, following a symlink only when its
// target stays inside the workspace root (no path escapes the root).
func (r *Registry) isDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if !r.insideRoot(p) {
			return false
		}
		fi, err = os.Stat(p)
		if err != nil {
			return false
		}
	}
	return fi.IsDir()
}

func (r *Registry) insideRoot(p string) bool {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	root, err := filepath.EvalSymlinks(r.root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (r *Registry) load(dir, name, rel string) (Skill, error) {
	file := filepath.Join(dir, FileName)
	fi, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Skill{}, errors.New("missing " + FileName)
		}
		return Skill{}, err
	}
	if !fi.Mode().IsRegular() {
		return Skill{}, errors.New(FileName + " is not a regular file")
	}
	if fi.Size() > MaxFileSize {
		return Skill{}, fmt.Errorf("file is larger than %d bytes", MaxFileSize)
	}
	if !r.insideRoot(file) {
		return Skill{}, errors.New("file resolves outside the workspace root")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return Skill{}, err
	}
	m, err := Parse(data)
	if err != nil {
		return Skill{}, err
	}
	return Skill{
		Name:         name,
		Version:      m.Version,
		Description:  m.Description,
		Capabilities: m.Capabilities,
		Path:         rel,
		Arguments:    m.Arguments,
		Body:         Body(data),
		Source:       string(data),
	}, nil
}

// watchTargets lists the directories to watch: the skills directory and its
// cairn-* subdirectories when they exist, and the existing directories of the
// chain from the skills directory up to the root (or, when the root itself is
// missing, up to its nearest existing ancestor), so that a skills directory
// created later is noticed.
func (r *Registry) watchTargets() map[string]bool {
	want := map[string]bool{}
	for p := r.skillsDir; ; p = filepath.Dir(p) {
		exists := dirExists(p)
		if exists {
			want[p] = true
		}
		// p is the root or above it once it is no longer than the root.
		if exists && len(p) <= len(r.root) || p == filepath.Dir(p) {
			break
		}
	}
	if want[r.skillsDir] {
		entries, _ := os.ReadDir(r.skillsDir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), Prefix) {
				continue
			}
			if p := filepath.Join(r.skillsDir, e.Name()); r.isDir(p) {
				want[p] = true
			}
		}
	}
	return want
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// syncWatches adds and removes watches so they match watchTargets. Wanted
// directories are added again on every pass: the call is idempotent and
// cheap, and it re-arms a directory that was deleted and re-created between
// two scans, which a "known watched" set would miss.
func (r *Registry) syncWatches() {
	if r.watcher == nil {
		return
	}
	want := r.watchTargets()
	for p := range r.watched {
		if !want[p] {
			// The directory may already be gone; the error says nothing useful.
			_ = r.watcher.Remove(p)
			delete(r.watched, p)
		}
	}
	for p := range want {
		if err := r.watcher.Add(p); err != nil {
			delete(r.watched, p)
			if !errors.Is(err, os.ErrNotExist) {
				r.logf("skills: cannot watch directory", "path", p, "error", err.Error())
			}
			continue
		}
		r.watched[p] = true
	}
}

// relevant reports whether an event can change the registry: anything inside
// the skills directory, or a directory of the chain above it appearing,
// disappearing or being renamed.
func (r *Registry) relevant(name string) bool {
	name = filepath.Clean(name)
	if name == r.skillsDir || strings.HasPrefix(name, r.skillsDir+string(filepath.Separator)) {
		return true
	}
	for p := filepath.Dir(r.skillsDir); ; p = filepath.Dir(p) {
		if name == p {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

func (r *Registry) watch() {
	defer close(r.done)
	timer := time.NewTimer(debounce)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-r.stop:
			timer.Stop()
			return
		case ev, ok := <-r.watcher.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !r.relevant(ev.Name) {
				continue
			}
			timer.Reset(debounce)
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return
			}
			// An overflow drops events; a rescan recovers the truth.
			r.logf("skills: watcher error, rescanning", "error", err.Error())
			timer.Reset(debounce)
		case <-timer.C:
			r.rescan()
		}
	}
}

func (r *Registry) poll() {
	defer close(r.done)
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.rescan()
		}
	}
}
