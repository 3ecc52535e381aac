package supervisor

import (
	"context"

	hostplugin "github.com/cairn-mcp/cairn/host/plugin"
	"github.com/cairn-mcp/cairn/host/plugin/convert"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// ListPrompts asks the plugin for its prompts.
func (p *Plugin) ListPrompts(ctx context.Context) ([]hostplugin.Prompt, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := rpc.ListPrompts(ctx, &pb.ListPromptsRequest{})
	if err != nil {
		return nil, err
	}
	return convert.PromptsFromProto(resp), nil
}

// GetPrompt renders one of the plugin's prompts. err is set when the
// plugin could not be asked; its own refusal is the result's Err.
func (p *Plugin) GetPrompt(ctx context.Context, name string, args map[string]string) (hostplugin.PromptResult, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return hostplugin.PromptResult{}, err
	}
	resp, err := rpc.GetPrompt(ctx, &pb.GetPromptRequest{Name: name, Arguments: args})
	if err != nil {
		return hostplugin.PromptResult{}, p.callError(ctx, err)
	}
	return convert.PromptResultFromProto(resp), nil
}

// Complete asks the plugin to complete an argument of one of its prompts or
// resource templates.
func (p *Plugin) Complete(ctx context.Context, req hostplugin.CompleteRequest) (hostplugin.Completion, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return hostplugin.Completion{}, err
	}
	resp, err := rpc.Complete(ctx, convert.CompleteRequestToProto(req))
	if err != nil {
		return hostplugin.Completion{}, err
	}
	return convert.CompletionFromProto(resp), nil
}
