package supervisor

import (
	"context"

	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// ListPrompts asks the plugin for its prompts.
func (p *Plugin) ListPrompts(ctx context.Context) (*pb.ListPromptsResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	return rpc.ListPrompts(ctx, &pb.ListPromptsRequest{})
}

// GetPrompt renders one of the plugin's prompts.
func (p *Plugin) GetPrompt(ctx context.Context, name string, args map[string]string) (*pb.GetPromptResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := rpc.GetPrompt(ctx, &pb.GetPromptRequest{Name: name, Arguments: args})
	if err != nil {
		return nil, p.callError(ctx, err)
	}
	return resp, nil
}

// Complete asks the plugin to complete an argument of one of its prompts or
// resource templates.
func (p *Plugin) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	return rpc.Complete(ctx, req)
}
