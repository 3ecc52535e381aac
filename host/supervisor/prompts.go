package supervisor

import (
	"context"

	hostplugin "github.com/cairn-mcp/cairn/host/plugin"
)

// ListPrompts asks the plugin for its prompts.
func (p *Plugin) ListPrompts(ctx context.Context) ([]hostplugin.Prompt, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	return rpc.ListPrompts(ctx)
}

// GetPrompt renders one of the plugin's prompts. err is set when the
// plugin could not be asked; its own refusal is the result's Err.
func (p *Plugin) GetPrompt(ctx context.Context, name string, args map[string]string) (hostplugin.PromptResult, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return hostplugin.PromptResult{}, err
	}
	res, err := rpc.GetPrompt(ctx, name, args)
	if err != nil {
		return hostplugin.PromptResult{}, p.callError(ctx, err)
	}
	return res, nil
}

// Complete asks the plugin to complete an argument of one of its prompts or
// resource templates.
func (p *Plugin) Complete(ctx context.Context, req hostplugin.CompleteRequest) (hostplugin.Completion, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return hostplugin.Completion{}, err
	}
	return rpc.Complete(ctx, req)
}
