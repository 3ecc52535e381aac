package sdk

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/internal/serverside"
)

// serverSide is the side of a Plugin that only the host's calls drive,
// reached through package serverside by package sdktest: Serve's own
// server calls the unexported methods directly.
type serverSide struct{ p *Plugin }

func init() {
	serverside.Register(func(plugin any) any { return serverSide{p: plugin.(*Plugin)} })
}

func (s serverSide) Configure(ctx context.Context, cfg Config) error { return s.p.start(ctx, cfg) }

func (s serverSide) Invoke(ctx context.Context, name string, args []byte) Result {
	return s.p.invoke(ctx, name, args)
}

func (s serverSide) DeliverEvent(ctx context.Context, ev Event) error {
	return s.p.deliverEvent(ctx, ev)
}

func (s serverSide) Health(ctx context.Context) Health { return s.p.healthReport(ctx) }

func (s serverSide) Prompts(ctx context.Context) ([]Prompt, error) { return s.p.listPrompts(ctx) }

func (s serverSide) GetPrompt(ctx context.Context, name string, args map[string]string) (PromptResult, error) {
	return s.p.getPrompt(ctx, name, args)
}

func (s serverSide) Complete(ctx context.Context, req CompletionRequest) ([]string, error) {
	return s.p.complete(ctx, req)
}

func (s serverSide) ListResources(ctx context.Context) ([]Resource, []ResourceTemplate, error) {
	return s.p.listResources(ctx)
}

func (s serverSide) ReadResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	return s.p.readResource(ctx, uri)
}

func (s serverSide) Tools() []ToolInfo { return s.p.toolInfos() }

func (s serverSide) Subscriptions() []string { return s.p.subscriptions() }

func (s serverSide) Stop(ctx context.Context) error { return s.p.stop(ctx) }

func (s serverSide) CheckSchemas() error { return s.p.checkSchemas() }

func (s serverSide) DerivedSchemas() map[string]ToolSchemas { return s.p.derivedSchemas() }
