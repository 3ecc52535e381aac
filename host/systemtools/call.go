package systemtools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Register adds the host's own tools to reg, owned by registry.HostOwner.
func Register(reg *registry.Registry) error {
	ping := &registry.Tool{
		Name:          "server_ping",
		Title:         "Ping",
		Description:   "Confirm cairn is reachable.",
		Toolset:       "system",
		InputSchema:   schema.For[NoInput](),
		ReadOnly:      true,
		Idempotent:    true,
		Validator:     schema.MustCompile(schema.For[NoInput]()),
		OutputSchema:  publishedSchema(schema.For[PingOutput]()),
		SuccessSchema: schema.For[PingOutput](),
	}
	health := &registry.Tool{
		Name:          "server_health",
		Title:         "Health",
		Description:   "Server status, plugins, problems (e.g. malformed skill files).",
		Toolset:       "system",
		InputSchema:   schema.For[NoInput](),
		ReadOnly:      true,
		Idempotent:    true,
		Validator:     schema.MustCompile(schema.For[NoInput]()),
		OutputSchema:  publishedSchema(schema.For[HealthOutput]()),
		SuccessSchema: schema.For[HealthOutput](),
	}
	return reg.Set(registry.HostOwner, []*registry.Tool{ping, health})
}

// Call runs one of the host's own tools: the pipeline's last stage hands
// it every call of a tool registry.HostOwner owns.
func (t *Tools) Call(ctx context.Context, c *pipeline.Call) *seam.Result {
	// The host runs these handlers, so it checks their arguments, as the
	// SDK does for a plugin's (docs/decisions.md D34).
	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if e := rawjson.Check(args, rawjson.DefaultMaxDepth); e != nil {
		return pipeline.Fail(e)
	}
	if e := c.Tool.Validate(args); e != nil {
		return pipeline.Fail(e)
	}
	var v any
	switch c.Name {
	case "server_ping":
		v = PingOutput{OK: true, Timestamp: Timestamp(time.Now())}
	case "server_health":
		v = t.Health(ctx)
	default:
		return pipeline.Fail(errs.Newf(404, errs.NotFound, "unknown host tool %q", c.Name))
	}
	raw, err := sdk.MarshalJSON(v)
	if err != nil {
		return pipeline.Fail(errs.New(500, errs.Internal, err.Error()))
	}
	return &seam.Result{Output: raw, Status: 200}
}
