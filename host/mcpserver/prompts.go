package mcpserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// promptPlugin is what the host needs of a plugin to serve its prompts.
type promptPlugin interface {
	Name() string
	ListPrompts(context.Context) ([]seam.Prompt, error)
	GetPrompt(context.Context, string, map[string]string) (seam.PromptResult, error)
}

// promptTable holds every plugin's prompts as last listed, and a
// fingerprint per plugin so a refresh that finds nothing new notifies
// nobody.
type promptTable struct {
	byPlugin map[string][]server.ServerPrompt
	keys     map[string]string
}

func newPromptTable() *promptTable {
	return &promptTable{byPlugin: map[string][]server.ServerPrompt{}, keys: map[string]string{}}
}

// adoptPrompts asks a plugin for its prompts and publishes them when they
// changed; mcp-go then sends notifications/prompts/list_changed.
func (srv *Server) adoptPrompts(ctx context.Context, p promptPlugin) {
	prompts, err := p.ListPrompts(ctx)
	if err != nil {
		srv.log.Debug("plugin did not list prompts", "plugin", p.Name(), "error", err)
		return
	}
	var b strings.Builder
	list := make([]server.ServerPrompt, 0, len(prompts))
	for _, pr := range prompts {
		fmt.Fprintf(&b, "%s\x00%s\x00%s", pr.Name, pr.Title, pr.Description)
		opts := []mcp.PromptOption{mcp.WithPromptDescription(pr.Description)}
		if pr.Title != "" {
			opts = append(opts, mcp.WithPromptTitle(pr.Title))
		}
		for _, a := range pr.Arguments {
			fmt.Fprintf(&b, "\x00%s\x00%s\x00%t", a.Name, a.Description, a.Required)
			aopts := []mcp.ArgumentOption{mcp.ArgumentDescription(a.Description)}
			if a.Required {
				aopts = append(aopts, mcp.RequiredArgument())
			}
			opts = append(opts, mcp.WithArgument(a.Name, aopts...))
		}
		b.WriteByte('\n')
		list = append(list, server.ServerPrompt{Prompt: mcp.NewPrompt(pr.Name, opts...), Handler: srv.promptHandler(p)})
	}
	key := b.String()
	srv.mu.Lock()
	if old, ok := srv.prompts.keys[p.Name()]; ok && old == key {
		srv.mu.Unlock()
		return
	}
	srv.prompts.keys[p.Name()] = key
	srv.prompts.byPlugin[p.Name()] = list
	srv.mu.Unlock()
	srv.syncPrompts()
}

// promptHandler renders a prompt through its plugin.
func (srv *Server) promptHandler(p promptPlugin) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		r, err := p.GetPrompt(ctx, req.Params.Name, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		if r.Err != nil {
			return nil, fmt.Errorf("%s: %s", r.Err.Code, r.Err.Message)
		}
		msgs := make([]mcp.PromptMessage, 0, len(r.Messages))
		for _, m := range r.Messages {
			role := mcp.RoleUser
			if m.Role == string(mcp.RoleAssistant) {
				role = mcp.RoleAssistant
			}
			var content mcp.Content = mcp.NewTextContent(m.Text)
			if m.Content != nil {
				content = mcpContent(*m.Content)
			}
			msgs = append(msgs, mcp.NewPromptMessage(role, content))
		}
		return mcp.NewGetPromptResult(r.Description, msgs), nil
	}
}

// dropPrompts forgets a stopped plugin's prompts.
func (srv *Server) dropPrompts(plugin string) {
	srv.mu.Lock()
	_, had := srv.prompts.byPlugin[plugin]
	delete(srv.prompts.byPlugin, plugin)
	delete(srv.prompts.keys, plugin)
	srv.mu.Unlock()
	if had {
		srv.syncPrompts()
	}
}

// refreshPrompts asks every running plugin for its prompts again.
func (srv *Server) refreshPrompts(ctx context.Context) {
	for _, p := range srv.fleet.Processes() {
		if p.Status().State == supervisor.StateRunning {
			srv.adoptPrompts(ctx, p)
		}
	}
}

// syncPrompts publishes every plugin's prompts.
func (srv *Server) syncPrompts() {
	srv.publishMu.Lock()
	defer srv.publishMu.Unlock()
	srv.mu.Lock()
	var all []server.ServerPrompt
	for _, l := range srv.prompts.byPlugin {
		all = append(all, l...)
	}
	srv.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Prompt.Name < all[j].Prompt.Name })
	srv.mcp.SetPrompts(all...)
}

// promptOwner names the plugin serving a prompt.
func (srv *Server) promptOwner(name string) string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for plugin, l := range srv.prompts.byPlugin {
		for _, p := range l {
			if p.Prompt.Name == name {
				return plugin
			}
		}
	}
	return ""
}

// watchPromptChanges refreshes a plugin's prompts when it says they changed
// (sdk.EventPromptsChanged), so clients hear of it without listing first.
// Its resources are asked for again too: a skill is both a prompt and a
// skill:// resource (docs/decisions.md D14).
func (srv *Server) watchPromptChanges() (unsubscribe func()) {
	return srv.bus.Subscribe("host.prompts", sdk.EventPromptsChanged, func(ev events.Event) {
		p := srv.fleet.Process(ev.Source)
		if p != nil {
			srv.adoptResources(context.Background(), p)
		}
	})
}

// filterPrompts keeps the prompts of plugins whose tools the session sees
// (D21): a prompt that tells the agent to call tools it cannot call (the
// sdd workflow without the sdd toolset, anything in MINIMAL mode) is noise.
func (srv *Server) filterPrompts(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	visible := srv.catalog.VisiblePlugins(ctx)
	owner := map[string]string{}
	srv.mu.Lock()
	for plugin, l := range srv.prompts.byPlugin {
		for _, p := range l {
			owner[p.Prompt.Name] = plugin
		}
	}
	srv.mu.Unlock()
	out := prompts[:0:0]
	for _, p := range prompts {
		if visible[owner[p.Name]] {
			out = append(out, p)
		}
	}
	return out
}
