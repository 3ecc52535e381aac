package sdk

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// callProto runs req through the server as its transports do: the request
// read and the outcome built by package convert.
func (s *server) callProto(ctx context.Context, req *pb.CallToolRequest, send func(*pb.CallToolEvent)) *pb.ToolResult {
	return convert.ResultToProto(s.call(ctx, convert.CallFromProto(req), send))
}
