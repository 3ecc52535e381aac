package hostconn

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Handshake is the go-plugin handshake a plugin process is started with.
var Handshake = protocol.Handshake

// Plugins is the go-plugin plugin set, by protocol version, that serves
// host to each plugin process started with it (logging through log).
func Plugins(host Host, log hclog.Logger) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{protocol.Version: {protocol.PluginKey: &protocol.GRPCPluginV1{Host: &hostServer{host: host, log: log}}}}
}

// DialOptions are the gRPC dial options for a plugin's connection.
func DialOptions() []grpc.DialOption { return protocol.DialOptions() }

// Conn is the host's connection to one plugin process over gRPC.
type Conn struct {
	rpc  *protocol.ClientV1
	name string
}

// Open takes the plugin's connection from a started go-plugin client;
// name is the host's name for the plugin, for messages.
func Open(client plugin.ClientProtocol, name string) (*Conn, error) {
	raw, err := client.Dispense(protocol.PluginKey)
	if err != nil {
		return nil, err
	}
	rpc, ok := raw.(*protocol.ClientV1)
	if !ok {
		return nil, fmt.Errorf("unexpected protocol client %T", raw)
	}
	return &Conn{rpc: rpc, name: name}, nil
}

// Config is what the host configures a plugin with.
type Config = seam.Config

// Configured is a plugin's answer to its configuration: the call lane it
// offers (a socket path; empty: none), and whether that lane takes event
// batches.
type Configured = seam.Configured

// Configure hands the plugin its configuration and the host's services.
func (c *Conn) Configure(ctx context.Context, cfg Config) (Configured, error) {
	conf, err := c.rpc.Configure(ctx, convert.ConfigureToProto(cfg, c.rpc.HostServiceID))
	if err != nil {
		return Configured{}, err
	}
	return convert.ConfiguredFromProto(conf), nil
}

// Describe asks the plugin for its description and tools.
func (c *Conn) Describe(ctx context.Context) (seam.Description, []seam.Tool, error) {
	desc, err := c.rpc.Describe(ctx, convert.DescribeRequestToProto())
	if err != nil {
		return seam.Description{}, nil, err
	}
	d, tools := convert.DescribeFromProto(desc)
	return d, tools, nil
}

// Call runs one call on the CallTool stream, handing its progress and log
// lines to onProgress and onLog (either may be nil) ahead of its result.
func (c *Conn) Call(ctx context.Context, call seam.Call, onProgress func(seam.Progress), onLog func(seam.LogLine)) (*seam.Result, error) {
	stream, err := c.rpc.CallTool(ctx, convert.CallToProto(call))
	if err != nil {
		return nil, err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errs.Newf(502, errs.PluginUnavailable, "plugin %s ended the call without a result", c.name)
			}
			return nil, err
		}
		switch e := ev.Event.(type) {
		case *pb.CallToolEvent_Progress:
			if onProgress != nil {
				onProgress(convert.ProgressFromProto(e.Progress))
			}
		case *pb.CallToolEvent_Log:
			if onLog != nil {
				onLog(convert.LogLineFromProto(e.Log))
			}
		case *pb.CallToolEvent_Result:
			return convert.ResultFromProto(e.Result), nil
		}
	}
}

// HandleEvent runs the plugin's handlers for one bus event.
func (c *Conn) HandleEvent(ctx context.Context, ev seam.Event) error {
	_, err := c.rpc.HandleEvent(ctx, convert.HandleEventToProto(ev))
	return err
}

// ListPrompts asks the plugin for its prompts.
func (c *Conn) ListPrompts(ctx context.Context) ([]seam.Prompt, error) {
	resp, err := c.rpc.ListPrompts(ctx, convert.ListPromptsRequestToProto())
	if err != nil {
		return nil, err
	}
	return convert.PromptsFromProto(resp), nil
}

// GetPrompt renders one of the plugin's prompts; the plugin's own refusal
// is the result's Err.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (seam.PromptResult, error) {
	resp, err := c.rpc.GetPrompt(ctx, convert.GetPromptToProto(name, args))
	if err != nil {
		return seam.PromptResult{}, err
	}
	return convert.PromptResultFromProto(resp), nil
}

// Complete asks the plugin to complete an argument.
func (c *Conn) Complete(ctx context.Context, req seam.CompleteRequest) (seam.Completion, error) {
	resp, err := c.rpc.Complete(ctx, convert.CompleteRequestToProto(req))
	if err != nil {
		return seam.Completion{}, err
	}
	return convert.CompletionFromProto(resp), nil
}

// ListResources asks the plugin for its resources.
func (c *Conn) ListResources(ctx context.Context) (seam.Resources, error) {
	resp, err := c.rpc.ListResources(ctx, convert.ListResourcesRequestToProto())
	if err != nil {
		return seam.Resources{}, err
	}
	return convert.ResourcesFromProto(resp), nil
}

// ReadResource reads one resource; the plugin's own refusal is the
// result's Err.
func (c *Conn) ReadResource(ctx context.Context, uri string) (seam.ReadResult, error) {
	resp, err := c.rpc.ReadResource(ctx, convert.ReadRequestToProto(uri))
	if err != nil {
		return seam.ReadResult{}, err
	}
	return convert.ReadResultFromProto(resp), nil
}

// Health asks the plugin for its health.
func (c *Conn) Health(ctx context.Context) (seam.Health, error) {
	resp, err := c.rpc.Health(ctx, convert.HealthRequestToProto())
	if err != nil {
		return seam.Health{}, err
	}
	return convert.HealthFromProto(resp), nil
}

// Task runs an operation on one of the plugin's tasks; the plugin's own
// refusal is the response's Err.
func (c *Conn) Task(ctx context.Context, req seam.TaskRequest) (seam.TaskResponse, error) {
	resp, err := c.rpc.Task(ctx, convert.TaskRequestToProto(req))
	if err != nil {
		return seam.TaskResponse{}, err
	}
	return convert.TaskResponseFromProto(resp), nil
}

// Stop asks the plugin to release its resources before its process ends.
func (c *Conn) Stop(ctx context.Context) error {
	_, err := c.rpc.Stop(ctx, convert.StopRequestToProto())
	return err
}
