package httpserve

import (
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The headers and URLs with which a remote client chooses, per request, the
// toolsets, tools and read-only mode it is served (docs/decisions.md D39),
// named as github-mcp-server names them. The URL's choice wins over the
// headers': /mcp/x/{toolset} replaces X-MCP-Toolsets, /readonly cannot be
// undone by X-MCP-Readonly: false.
const (
	// HeaderToolsets is a comma-separated list of toolsets ("all": every
	// toolset the listener and the key allow).
	HeaderToolsets = "X-MCP-Toolsets"
	// HeaderTools is a comma-separated list of tools, added to the
	// toolsets' (alone: only these tools).
	HeaderTools = "X-MCP-Tools"
	// HeaderReadonly is true (only read-only tools) or false (the
	// listener's mode, asked explicitly).
	HeaderReadonly = "X-MCP-Readonly"
	// HeaderExcludeTools is a comma-separated list of tools left out of
	// whatever else the request is served; it wins over X-MCP-Tools.
	HeaderExcludeTools = "X-MCP-Exclude-Tools"
)

// maxChoiceEntries bounds the names one header may carry.
const maxChoiceEntries = 256

// requestChoice is what one request asked for; its zero value asks nothing.
type requestChoice struct {
	// toolsets are the toolsets named, from toolsetsFrom (a header or the
	// URL).
	toolsets     []string
	toolsetsFrom string
	tools        []string
	exclude      []string
	// readOnly is the mode asked for when readOnlySet.
	readOnly, readOnlySet bool
	readOnlyFrom          string
}

// empty reports whether the request chose nothing.
func (c requestChoice) empty() bool {
	return c.toolsetsFrom == "" && len(c.tools) == 0 && len(c.exclude) == 0 && !c.readOnlySet
}

// readOnlyCause names what asked for read-only tools (the header or the
// URL), so a refused write names it; "" when nothing did.
func (c requestChoice) readOnlyCause() string {
	if c.readOnlySet && c.readOnly {
		return c.readOnlyFrom
	}
	return ""
}

// Compiled on first use, not in package init, which every cairn process runs.
var (
	toolsetName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })
	toolName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`) })
)

// parseChoice reads a request's choice from its headers and its URL path
// (/mcp, /mcp/readonly, /mcp/x/{toolset}, /mcp/x/{toolset}/readonly). A
// malformed value is a 400 naming the header in details.header; a path
// outside these is a 404.
func parseChoice(h http.Header, path string) (requestChoice, *errs.Error) {
	var c requestChoice
	var err *errs.Error
	if c.toolsets, err = parseNames(h, HeaderToolsets, toolsetName(), "a toolset name such as core or sdd, or all"); err != nil {
		return c, err
	}
	if len(c.toolsets) > 0 {
		c.toolsetsFrom = HeaderToolsets
	}
	if c.tools, err = parseNames(h, HeaderTools, toolName(), "a tool name such as task_list"); err != nil {
		return c, err
	}
	if c.exclude, err = parseNames(h, HeaderExcludeTools, toolName(), "a tool name such as task_delete"); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(strings.Join(h.Values(HeaderReadonly), ",")); v != "" {
		switch strings.ToLower(v) {
		case "true", "1", "yes", "on":
			c.readOnly = true
		case "false", "0", "no", "off":
		default:
			return c, errs.Newf(400, errs.InvalidInput, "%s %q is not true or false", HeaderReadonly, truncate(v)).With("header", HeaderReadonly)
		}
		c.readOnlySet, c.readOnlyFrom = true, HeaderReadonly
	}
	return c, c.fromPath(path)
}

// fromPath applies the URL's choice, which wins over the headers'.
func (c *requestChoice) fromPath(path string) *errs.Error {
	rest, ok := strings.CutPrefix(path, "/mcp")
	if !ok || (rest != "" && rest[0] != '/') {
		return errs.Newf(404, errs.NotFound, "no MCP endpoint at %q (use /mcp, /mcp/readonly, /mcp/x/{toolset} or /mcp/x/{toolset}/readonly)", truncate(path)).With("header", "URL")
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if parts[0] == "" {
		parts = nil
	}
	if len(parts) >= 2 && parts[0] == "x" {
		name := parts[1]
		if !toolsetName().MatchString(name) {
			return errs.Newf(400, errs.InvalidInput, "URL /mcp/x/%s: %q is not a toolset name", truncate(name), truncate(name)).With("header", "URL").With("name", truncate(name))
		}
		c.toolsets, c.toolsetsFrom = []string{name}, "URL /mcp/x/"+name
		parts = parts[2:]
	}
	if len(parts) == 1 && parts[0] == "readonly" {
		c.readOnly, c.readOnlySet, c.readOnlyFrom = true, true, "URL /readonly"
		parts = nil
	}
	if len(parts) > 0 {
		return errs.Newf(404, errs.NotFound, "no MCP endpoint at %q (use /mcp, /mcp/readonly, /mcp/x/{toolset} or /mcp/x/{toolset}/readonly)", truncate(path)).With("header", "URL")
	}
	return nil
}

// parseNames splits a header's comma-separated names (every line of it),
// trimmed, empty entries and repeats dropped; each must match pattern.
func parseNames(h http.Header, header string, pattern *regexp.Regexp, want string) ([]string, *errs.Error) {
	var out []string
	seen := map[string]bool{}
	for _, line := range h.Values(header) {
		for _, raw := range strings.Split(line, ",") {
			name := strings.TrimSpace(raw)
			if name == "" || seen[name] {
				continue
			}
			if !pattern.MatchString(name) {
				return nil, errs.Newf(400, errs.InvalidInput, "%s: %q is not %s", header, truncate(name), want).With("header", header).With("name", truncate(name))
			}
			if len(out) == maxChoiceEntries {
				return nil, errs.Newf(400, errs.InvalidInput, "%s names more than %d entries", header, maxChoiceEntries).With("header", header)
			}
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// truncate keeps a client's value short enough to quote in an error.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
