package lane

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// ErrorToProto is a typed error as the protocol carries it (details as a
// JSON object, never null).
func ErrorToProto(e *errs.Error) *pb.ToolError {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		raw = []byte(`{}`)
	}
	return &pb.ToolError{Code: e.Code, Message: e.Message, Details: raw, Status: int32(e.Status)}
}
