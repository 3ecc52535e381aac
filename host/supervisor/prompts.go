package supervisor

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// ListPrompts asks the plugin for its prompts.
func (p *Process) ListPrompts(ctx context.Context) ([]seam.Prompt, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	return rpc.ListPrompts(ctx)
}

// GetPrompt renders one of the plugin's prompts. err is set when the
// plugin could not be asked; its own refusal is the result's Err.
func (p *Process) GetPrompt(ctx context.Context, name string, args map[string]string) (seam.PromptResult, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return seam.PromptResult{}, err
	}
	res, err := rpc.GetPrompt(ctx, name, args)
	if err != nil {
		return seam.PromptResult{}, p.callError(ctx, err)
	}
	return res, nil
}

// Complete asks the plugin to complete an argument of one of its prompts or
// resource templates.
func (p *Process) Complete(ctx context.Context, req seam.CompleteRequest) (seam.Completion, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return seam.Completion{}, err
	}
	return rpc.Complete(ctx, req)
}
