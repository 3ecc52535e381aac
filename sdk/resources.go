package sdk

import (
	"context"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Resource is an MCP resource a plugin serves.
type Resource struct {
	URI         string
	Name        string
	Description string
	MIMEType    string
}

// ResourceTemplate is an MCP resource template (RFC 6570 URI template).
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Description string
	MIMEType    string
}

// ResourceContents is what reading a resource returns: Text or Blob.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

type resourceReader struct {
	prefix string
	read   func(ctx context.Context, uri string) ([]ResourceContents, error)
}

// AddResource declares a static resource.
func (p *Plugin) AddResource(r Resource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resources = append(p.resources, r)
}

// AddResourceTemplate declares a resource template.
func (p *Plugin) AddResourceTemplate(t ResourceTemplate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.templates = append(p.templates, t)
}

// ListResourcesWith registers a function that lists resources dynamically
// (in addition to those added with AddResource).
func (p *Plugin) ListResourcesWith(f func(ctx context.Context) ([]Resource, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listers = append(p.listers, f)
}

// HandleResources routes reads of URIs starting with prefix (for example
// "sdd://") to read. Return an *Error for a missing (404) or invalid (400)
// URI.
func (p *Plugin) HandleResources(prefix string, read func(ctx context.Context, uri string) ([]ResourceContents, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readers = append(p.readers, resourceReader{prefix: prefix, read: read})
}

// listResources returns the static and dynamic resources and the templates.
func (p *Plugin) listResources(ctx context.Context) ([]Resource, []ResourceTemplate, error) {
	p.mu.RLock()
	res := append([]Resource(nil), p.resources...)
	tpl := append([]ResourceTemplate(nil), p.templates...)
	listers := append([]func(context.Context) ([]Resource, error)(nil), p.listers...)
	p.mu.RUnlock()
	for _, l := range listers {
		more, err := l(ctx)
		if err != nil {
			return nil, nil, err
		}
		res = append(res, more...)
	}
	return res, tpl, nil
}

// readResource reads one resource.
func (p *Plugin) readResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	p.mu.RLock()
	readers := append([]resourceReader(nil), p.readers...)
	p.mu.RUnlock()
	best := -1
	for i, r := range readers {
		if strings.HasPrefix(uri, r.prefix) && (best < 0 || len(r.prefix) > len(readers[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return nil, errs.NotFoundf(errs.ResourceNotFound, "uri", "no resource %q in plugin %s", uri, p.name)
	}
	return readers[best].read(ctx, uri)
}
