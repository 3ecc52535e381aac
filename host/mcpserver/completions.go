package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// completions answers completion/complete by asking the plugin that owns the
// prompt or resource template being filled in; mcp-go calls it for both
// kinds of reference.
type completions struct{ srv *Server }

func (c completions) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.srv.complete(ctx, "prompt", prompt, c.srv.promptOwner(prompt), arg, cc)
}

func (c completions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.srv.complete(ctx, "resource", uri, c.srv.templateOwner(uri), arg, cc)
}

// complete routes one completion to its plugin. A reference nobody owns
// gets no values (not an error: the client may complete while typing).
func (srv *Server) complete(ctx context.Context, refType, name, owner string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	if owner == "" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	p := srv.fleet.Process(owner)
	if p == nil {
		return nil, fmt.Errorf("plugin %s is not running", owner)
	}
	resp, err := p.Complete(ctx, seam.CompleteRequest{RefType: refType, RefName: name, Argument: arg.Name, Value: arg.Value, Context: cc.Arguments})
	if err != nil {
		return nil, err
	}
	return &mcp.Completion{Values: resp.Values, Total: resp.Total, HasMore: resp.HasMore}, nil
}

// templateOwner names the plugin serving a resource template, given the
// template itself or a URI it matches.
func (srv *Server) templateOwner(uri string) string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for plugin, l := range srv.templates {
		for _, t := range l {
			if t.Template.URITemplate != nil && t.Template.URITemplate.Raw() == uri {
				return plugin
			}
		}
	}
	for plugin, l := range srv.templates {
		for _, t := range l {
			if t.Template.URITemplate != nil && t.Template.URITemplate.Regexp().MatchString(uri) {
				return plugin
			}
		}
	}
	return ""
}
