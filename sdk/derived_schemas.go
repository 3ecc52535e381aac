package sdk

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/schema"
)

// ToolSchemas are one tool's input and output schemas as schema.For
// derives them from its Go types; "" for a side the tool declares itself.
type ToolSchemas struct{ Input, Output string }

// WithDerivedSchemas hands New its tools' schemas worked out ahead of
// time, so that AddTool reads them from m instead of deriving them by
// reflection, which was most of a built-in plugin's work before its
// handshake, in every process start (docs/decisions.md D46). m is
// generated: toolsnap.CheckDerived writes it as Go source and fails once it
// no longer matches the types. A tool m lacks is derived as without it.
func WithDerivedSchemas(m map[string]ToolSchemas) Option {
	return func(p *Plugin) { p.derived = m }
}

// deriveFunc returns what a tool's input and output derive to (the
// output by deriveOut: Out's schema, or the tool's OutputFrom), leaving ""
// for a side declared explicitly.
func deriveFunc[In any](in, out json.RawMessage, deriveOut func() json.RawMessage) func() ToolSchemas {
	return func() ToolSchemas {
		var s ToolSchemas
		if in == nil {
			s.Input = string(schema.For[In]())
		}
		if out == nil {
			s.Output = string(deriveOut())
		}
		return s
	}
}

// derivedSchemas derives every tool's schemas afresh, ignoring
// WithDerivedSchemas: what the generated table must hold.
func (p *Plugin) derivedSchemas() map[string]ToolSchemas {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[string]ToolSchemas, len(p.tools))
	for name, t := range p.tools {
		if s := t.derive(); s != (ToolSchemas{}) {
			out[name] = s
		}
	}
	return out
}
