// Package registry aggregates the tools of every plugin (and the host's own
// system tools), refuses duplicate names, and decides which tools a session
// sees under the current mode and toolsets.
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
	// InputSchema is the plugin's schema; OutputSchema is the plugin's
	// success schema wrapped so it also admits the error envelope.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	ReadOnly     bool
	Destructive  bool
	Idempotent   bool
	OpenWorld    bool
	// Validator checks arguments against InputSchema. When nil, Validate
	// compiles InputSchema on the tool's first call: a session sees a
	// fraction of the tools, and compiling all of them was a large part of
	// start-up.
	Validator *schema.Validator
	// HonoursIdempotency: the plugin records a call's idempotency key with
	// its write, so an interrupted call may be replayed.
	HonoursIdempotency bool

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

// ErrorEnvelopeSchema is the JSON Schema of a tool error's structured
// content (PRODUCT.md D3).
const ErrorEnvelopeSchema = `{"type":"object","required":["error"],"properties":{"error":{"type":"object","required":["code","message","details"],"properties":{"code":{"type":"string"},"message":{"type":"string"},"details":{"type":"object"}}}}}`

// WrapOutputSchema returns an output schema that admits the success object
// described by success and the error envelope (PRODUCT.md D3): MCP clients
// that validate structuredContent against outputSchema do so on errors too.
//
// For the usual flat object schema the result keeps the success properties
// at the top level, adds "error", and moves "required" into an anyOf of the
// two shapes; clients that read only "properties" still see the fields.
// Anything else is wrapped as anyOf[success, envelope].
func WrapOutputSchema(success json.RawMessage) (json.RawMessage, error) {
	if len(success) == 0 {
		success = json.RawMessage(`{"type":"object"}`)
	}
	var probe map[string]any
	if err := json.Unmarshal(success, &probe); err != nil {
		return nil, fmt.Errorf("output schema is not a JSON object: %w", err)
	}
	delete(probe, "$schema")
	delete(probe, "$id")
	var envelope map[string]any
	_ = json.Unmarshal([]byte(ErrorEnvelopeSchema), &envelope)
	errorProp := envelope["properties"].(map[string]any)["error"]

	if flat(probe) {
		props, _ := probe["properties"].(map[string]any)
		if _, clash := props["error"]; !clash {
			merged := map[string]any{}
			for k, v := range props {
				merged[k] = v
			}
			merged["error"] = errorProp
			successBranch := map[string]any{"not": map[string]any{"required": []any{"error"}}}
			if req, ok := probe["required"].([]any); ok && len(req) > 0 {
				successBranch = map[string]any{"required": req, "not": map[string]any{"required": []any{"error"}}}
			}
			out := map[string]any{
				"type":       "object",
				"properties": merged,
				"anyOf":      []any{successBranch, map[string]any{"required": []any{"error"}}},
			}
			if d, ok := probe["description"]; ok {
				out["description"] = d
			}
			return json.Marshal(out)
		}
	}
	inner, err := json.Marshal(probe)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(`{"type":"object","anyOf":[` + string(inner) + `,` + ErrorEnvelopeSchema + `]}`), nil
}

// flat reports whether a schema is a plain object schema made only of
// keywords WrapOutputSchema knows how to merge.
func flat(s map[string]any) bool {
	if s["type"] != "object" {
		return false
	}
	for k := range s {
		switch k {
		case "type", "properties", "required", "additionalProperties", "description", "title":
		default:
			return false
		}
	}
	return true
}
