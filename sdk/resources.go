package sdk

import (
	"context"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Resource is an MCP resource a plugin serves (the seam's type).
type Resource = seam.Resource

// ResourceTemplate is an MCP resource template (RFC 6570 URI template;
// the seam's type).
type ResourceTemplate = seam.ResourceTemplate

// ResourceContents is what reading a resource returns: Text or Blob (the
// seam's type).
type ResourceContents = seam.ResourceContents

type resourceReader struct {
	prefix string
	read   func(ctx context.Context, uri string) ([]ResourceContents, error)
}

// ResourceSet is a family of resources a plugin serves: the ones it
// lists (fixed, and listed afresh at each resources/list), the templates
// of ones a client may read without listing them, and the reader of the
// URIs under one prefix. A zero field adds nothing.
type ResourceSet struct {
	// Prefix routes reads: a URI that starts with it (for example
	// "sdd://") is read by Read; of several sets' prefixes, the longest
	// that matches wins.
	Prefix string
	// Read reads one URI under Prefix. Return an *Error for a missing
	// (404) or invalid (400) URI.
	Read func(ctx context.Context, uri string) ([]ResourceContents, error)
	// Fixed are listed as they are.
	Fixed []Resource
	// List lists resources that change while the plugin runs.
	List func(ctx context.Context) ([]Resource, error)
	// Templates are listed as resource templates.
	Templates []ResourceTemplate
}

// AddResources declares a family of resources and routes the reads of
// its prefix.
func (p *Plugin) AddResources(s ResourceSet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resources = append(p.resources, s.Fixed...)
	p.templates = append(p.templates, s.Templates...)
	if s.List != nil {
		p.listers = append(p.listers, s.List)
	}
	if s.Read != nil {
		p.readers = append(p.readers, resourceReader{prefix: s.Prefix, read: s.Read})
	}
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
