package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// resourcePlugin is what the host needs of a plugin to serve its resources.
type resourcePlugin interface {
	Name() string
	ListResources(context.Context) (seam.Resources, error)
	ReadResource(context.Context, string) (seam.ReadResult, error)
}

// adoptResources registers a plugin's resources, templates and prompts with
// the MCP server, routing reads back to the plugin.
func (srv *Server) adoptResources(ctx context.Context, p interface {
	resourcePlugin
	promptPlugin
}) {
	srv.adoptPrompts(ctx, p)
	resp, err := p.ListResources(ctx)
	if err != nil {
		srv.log.Warn("plugin did not list its resources", "plugin", p.Name(), "error", err)
		return
	}
	read := func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		r, err := p.ReadResource(ctx, req.Params.URI)
		if err != nil {
			return nil, err
		}
		if r.Err != nil {
			if r.Err.Status == 404 {
				return nil, fmt.Errorf("%w: %s: %s", server.ErrResourceNotFound, r.Err.Code, r.Err.Message)
			}
			return nil, fmt.Errorf("%s: %s", r.Err.Code, r.Err.Message)
		}
		out := make([]mcp.ResourceContents, 0, len(r.Contents))
		for _, c := range r.Contents {
			if c.Blob != nil {
				out = append(out, mcp.BlobResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: base64.StdEncoding.EncodeToString(c.Blob)})
			} else {
				out = append(out, mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
			}
		}
		return out, nil
	}
	var resources []server.ServerResource
	var templates []server.ServerResourceTemplate
	for _, r := range resp.Resources {
		res := mcp.NewResource(r.URI, r.Name, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType))
		resources = append(resources, server.ServerResource{Resource: res, Handler: read})
	}
	for _, t := range resp.Templates {
		tpl, err := newTemplate(t)
		if err != nil {
			srv.log.Warn("plugin resource template refused", "plugin", p.Name(), "template", t.URITemplate, "error", err)
			continue
		}
		templates = append(templates, server.ServerResourceTemplate{Template: tpl, Handler: read})
	}
	key := resourceKey(resp)
	srv.mu.Lock()
	if old, ok := srv.resKeys[p.Name()]; ok && old == key {
		srv.mu.Unlock()
		return
	}
	srv.resKeys[p.Name()] = key
	srv.resources[p.Name()] = resources
	srv.templates[p.Name()] = templates
	srv.mu.Unlock()
	srv.syncResources()
}

// resourceKey fingerprints a plugin's resource listing.
func resourceKey(resp seam.Resources) string {
	var b strings.Builder
	for _, r := range resp.Resources {
		fmt.Fprintf(&b, "r\x00%s\x00%s\x00%s\x00%s\n", r.URI, r.Name, r.Description, r.MIMEType)
	}
	for _, t := range resp.Templates {
		fmt.Fprintf(&b, "t\x00%s\x00%s\x00%s\x00%s\n", t.URITemplate, t.Name, t.Description, t.MIMEType)
	}
	return b.String()
}

// refreshResources asks every running plugin for its resources again.
func (srv *Server) refreshResources(ctx context.Context) {
	for _, p := range srv.fleet.Processes() {
		if p.Status().State == supervisor.StateRunning {
			srv.adoptResources(ctx, p)
		}
	}
}

func newTemplate(t seam.ResourceTemplate) (tpl mcp.ResourceTemplate, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid URI template: %v", r)
		}
	}()
	return mcp.NewResourceTemplate(t.URITemplate, t.Name,
		mcp.WithTemplateDescription(t.Description), mcp.WithTemplateMIMEType(t.MIMEType)), nil
}

func (srv *Server) dropResources(plugin string) {
	srv.dropPrompts(plugin)
	srv.mu.Lock()
	_, had := srv.resources[plugin]
	delete(srv.resKeys, plugin)
	delete(srv.resources, plugin)
	delete(srv.templates, plugin)
	srv.mu.Unlock()
	if had {
		srv.syncResources()
	}
}

// syncResources publishes every plugin's resources and templates.
func (srv *Server) syncResources() {
	srv.publishMu.Lock()
	defer srv.publishMu.Unlock()
	srv.mu.Lock()
	var res []server.ServerResource
	var tpl []server.ServerResourceTemplate
	for _, r := range srv.resources {
		res = append(res, r...)
	}
	for _, t := range srv.templates {
		tpl = append(tpl, t...)
	}
	srv.mu.Unlock()
	srv.mcp.SetResources(res...)
	srv.mcp.SetResourceTemplates(tpl...)
}
