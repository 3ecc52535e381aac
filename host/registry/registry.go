// Package registry aggregates the tools of every plugin (and the host's own
// system tools), refuses duplicate names, and decides which tools a client
// session sees under the current mode and toolsets.
package registry

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// HostOwner is the owner name of the host's own tools.
const HostOwner = "host"

// Tool is one registered tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Owner is the plugin that serves the tool, or HostOwner.
	Owner   string
	Toolset string
	// InputSchema is the plugin's schema. OutputSchema is what tools/list
	// publishes: the success schema or the error envelope
	// (schema.Published, docs/decisions.md D37); SuccessSchema is the
	// plugin's success schema.
	InputSchema   json.RawMessage
	OutputSchema  json.RawMessage
	SuccessSchema json.RawMessage
	ReadOnly      bool
	Destructive   bool
	Idempotent    bool
	OpenWorld     bool
	// Validator checks arguments against InputSchema. When nil, Validate
	// compiles InputSchema on the tool's first call: a session sees a
	// fraction of the tools, and compiling all of them was a large part of
	// start-up.
	Validator *schema.Validator
	// HonoursIdempotency: the plugin records a call's idempotency key with
	// its write, so an interrupted call may be replayed.
	HonoursIdempotency bool
	// TaskSupport is "optional" when a client may run the tool as an MCP
	// task (docs/decisions.md D39); empty when it never runs as one.
	TaskSupport string
	// CallsTools: the plugin's handler calls other areas' tools while it
	// runs, so the host opens a tool channel for its calls.
	CallsTools bool

	compileOnce sync.Once
	compiled    *schema.Validator
	compileErr  error
}

// Validate checks a call's arguments against the tool's input schema.
func (t *Tool) Validate(args []byte) *errs.Error {
	v := t.Validator
	if v == nil {
		t.compileOnce.Do(func() {
			t.compiled, t.compileErr = schema.Compile(t.InputSchema)
		})
		if t.compileErr != nil {
			return errs.Newf(500, errs.Internal, "tool %s (plugin %s) declares an input schema that does not compile: %v", t.Name, t.Owner, t.compileErr)
		}
		v = t.compiled
	}
	return v.Validate(args)
}

// DuplicateError reports a tool name claimed by two owners.
type DuplicateError struct {
	Tool         string
	First, Again string
}

// Error names the tool and both plugins, and what to do.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("duplicate tool name %q: provided by plugin %s and by plugin %s; remove or rename one of them", e.Tool, e.First, e.Again)
}

// Registry holds the tools by name.
type Registry struct {
	mu      sync.RWMutex
	tools   map[string]*Tool
	byOwner map[string][]string
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{tools: map[string]*Tool{}, byOwner: map[string][]string{}}
}

// Set replaces all tools of owner. It fails, changing nothing, when a name is
// already served by another owner or repeats within the set.
func (r *Registry) Set(owner string, tools []*Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Name] {
			return &DuplicateError{Tool: t.Name, First: owner, Again: owner}
		}
		seen[t.Name] = true
		if cur, ok := r.tools[t.Name]; ok && cur.Owner != owner {
			return &DuplicateError{Tool: t.Name, First: cur.Owner, Again: owner}
		}
	}
	for _, n := range r.byOwner[owner] {
		delete(r.tools, n)
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		t.Owner = owner
		r.tools[t.Name] = t
		names = append(names, t.Name)
	}
	r.byOwner[owner] = names
	return nil
}

// Remove drops every tool of owner.
func (r *Registry) Remove(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.byOwner[owner] {
		delete(r.tools, n)
	}
	delete(r.byOwner, owner)
}

// Get returns a tool by name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool sorted by name.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Owned returns the tool names of owner.
func (r *Registry) Owned(owner string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.byOwner[owner]...)
}
