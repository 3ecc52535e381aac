// Package sdktest drives a plugin in process, as its host would, for the
// plugin's tests: configure it, call its tools, deliver bus events, read its
// resources and prompts, check its health, stop it. None of this is on
// *sdk.Plugin, whose methods are the ones a plugin author calls while
// building the plugin.
package sdktest

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/internal/serverside"
)

// server is the side of a plugin the host's calls drive; package sdk
// implements it and registers it with package serverside.
type server interface {
	Configure(ctx context.Context, cfg sdk.Config) error
	Invoke(ctx context.Context, name string, args []byte) sdk.Result
	DeliverEvent(ctx context.Context, ev sdk.Event) error
	Health(ctx context.Context) sdk.Health
	Prompts(ctx context.Context) ([]sdk.Prompt, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) (sdk.PromptResult, error)
	Complete(ctx context.Context, req sdk.CompletionRequest) ([]string, error)
	ListResources(ctx context.Context) ([]sdk.Resource, []sdk.ResourceTemplate, error)
	ReadResource(ctx context.Context, uri string) ([]sdk.ResourceContents, error)
	Tools() []sdk.ToolInfo
	Subscriptions() []string
	Stop(ctx context.Context) error
	CheckSchemas() error
	DerivedSchemas() map[string]sdk.ToolSchemas
}

func serverOf(p *sdk.Plugin) server { return serverside.Of(p).(server) }

// Configure runs p's configure hooks, then its open work (sdk.Hooks), and
// returns once both are done: a host gets its answer after the configure
// hooks and lets long open work go on after it.
func Configure(ctx context.Context, p *sdk.Plugin, cfg sdk.Config) error {
	return serverOf(p).Configure(ctx, cfg)
}

// Invoke calls tool name with the JSON arguments args exactly as a call
// from the host does: the arguments are checked against the tool's input
// schema, then decoded for the handler, whose panic is recovered and whose
// output is encoded (and, in a test binary, checked against the output
// schema). ctx may carry a caller (sdk.WithCaller), a progress sink
// (sdk.WithProgress) and an idempotency key (sdk.WithIdempotency).
func Invoke(ctx context.Context, p *sdk.Plugin, name string, args []byte) sdk.Result {
	return serverOf(p).Invoke(ctx, name, args)
}

// DeliverEvent runs p's handlers subscribed to ev's type (sdk.Plugin.OnEvent)
// and returns the first handler's error.
func DeliverEvent(ctx context.Context, p *sdk.Plugin, ev sdk.Event) error {
	return serverOf(p).DeliverEvent(ctx, ev)
}

// Health is p's health report as the host reads it: "opening" while the
// open work runs, then the plugin's own report ("ok" when it has none).
func Health(ctx context.Context, p *sdk.Plugin) sdk.Health {
	return serverOf(p).Health(ctx)
}

// Prompts lists every prompt p serves now, sorted by name.
func Prompts(ctx context.Context, p *sdk.Plugin) ([]sdk.Prompt, error) {
	return serverOf(p).Prompts(ctx)
}

// GetPrompt renders p's prompt name with args, checking its required
// arguments.
func GetPrompt(ctx context.Context, p *sdk.Plugin, name string, args map[string]string) (sdk.PromptResult, error) {
	return serverOf(p).GetPrompt(ctx, name, args)
}

// Complete asks p's completers for values, as a client's
// completion/complete does.
func Complete(ctx context.Context, p *sdk.Plugin, req sdk.CompletionRequest) ([]string, error) {
	return serverOf(p).Complete(ctx, req)
}

// ListResources lists p's resources (fixed and listed) and templates.
func ListResources(ctx context.Context, p *sdk.Plugin) ([]sdk.Resource, []sdk.ResourceTemplate, error) {
	return serverOf(p).ListResources(ctx)
}

// ReadResource reads the resource at uri from p.
func ReadResource(ctx context.Context, p *sdk.Plugin, uri string) ([]sdk.ResourceContents, error) {
	return serverOf(p).ReadResource(ctx, uri)
}

// Tools lists p's tools in declaration order, as the host learns them.
func Tools(p *sdk.Plugin) []sdk.ToolInfo { return serverOf(p).Tools() }

// Subscriptions lists the event patterns p subscribed to, sorted.
func Subscriptions(p *sdk.Plugin) []string { return serverOf(p).Subscriptions() }

// Stop runs p's stop hooks, in reverse order and once, then waits until
// every event p published has reached the host.
func Stop(ctx context.Context, p *sdk.Plugin) error { return serverOf(p).Stop(ctx) }

// CheckSchemas compiles the input and output schema of every tool of p and
// reports the first that does not compile: a plugin's tests call it, since
// start-up compiles a schema only at the tool's first call.
func CheckSchemas(p *sdk.Plugin) error { return serverOf(p).CheckSchemas() }

// DerivedSchemas derives p's tools' schemas from their Go types afresh,
// ignoring sdk.WithDerivedSchemas: what a generated table must hold.
func DerivedSchemas(p *sdk.Plugin) map[string]sdk.ToolSchemas { return serverOf(p).DerivedSchemas() }
