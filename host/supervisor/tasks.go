package supervisor

import (
	"context"

	hostplugin "github.com/cairn-mcp/cairn/host/plugin"
)

// Task runs an operation on one of the plugin's tasks (docs/decisions.md
// D39). err is set when the plugin could not be asked; its own refusal is
// the response's Err.
func (p *Plugin) Task(ctx context.Context, req hostplugin.TaskRequest) (hostplugin.TaskResponse, error) {
	rpc, err := p.await(ctx)
	if err != nil {
		return hostplugin.TaskResponse{}, err
	}
	resp, err := rpc.Task(ctx, req)
	if err != nil {
		return hostplugin.TaskResponse{}, p.callError(ctx, err)
	}
	return resp, nil
}
