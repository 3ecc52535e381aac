package supervisor

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// MCPTask runs an operation on one of the plugin's MCP tasks
// (docs/decisions.md D39). err is set when the plugin could not be asked; its own refusal is
// the response's Err.
func (p *Process) MCPTask(ctx context.Context, req seam.TaskRequest) (seam.TaskResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return seam.TaskResponse{}, err
	}
	resp, err := rpc.Task(ctx, req)
	if err != nil {
		return seam.TaskResponse{}, p.callError(ctx, err)
	}
	return resp, nil
}
