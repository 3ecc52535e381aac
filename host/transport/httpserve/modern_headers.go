package httpserve

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
)

// modernHeaders checks the headers 2026-07-28 requires of a POST that the
// host answers itself (Handler.AnswerExtension) before mcp-go, which checks
// them for everything else: Mcp-Protocol-Version equal to the _meta
// version, Mcp-Method equal to the method, Mcp-Name equal to a tools/call's
// name and, as the tasks extension requires of tasks/get, tasks/update and
// tasks/cancel, to params.taskId. nil when the request is of the older era
// or its headers are right.
func modernHeaders(r *http.Request, probe jsonrpc.Probe, body []byte) *mcp.JSONRPCError {
	if len(probe.Params.Meta.ProtocolVersion) == 0 {
		return nil
	}
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	var version string
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(probe.Params.Meta.ProtocolVersion, &version) != nil {
		return nil // mcp-go refuses it in its own words
	}
	id := mcp.NewRequestId(probeID(probe))
	mismatch := func(msg string) *mcp.JSONRPCError {
		e := mcp.NewJSONRPCError(id, mcp.HEADER_MISMATCH, msg, nil)
		return &e
	}
	if got := r.Header.Get(mcp.HeaderProtocolVersion); got != version {
		return mismatch(mcp.HeaderProtocolVersion + " header " + `"` + got + `"` + " does not match the request's _meta version " + version)
	}
	if err := mcp.ValidateStandardHeaders(r.Header.Get, version, mcp.MCPMethod(probe.Method), req.Params); err != nil {
		return mismatch(err.Error())
	}
	switch probe.Method {
	case string(mcp.MethodTasksGet), string(mcp.MethodTasksCancel), "tasks/update":
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if name, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName)); !ok || name != p.TaskID {
			return mismatch(mcp.HeaderName + " header must be the task's params.taskId for " + probe.Method)
		}
	}
	return nil
}

// modernStatus is the HTTP status 2026-07-28 gives a JSON-RPC answer: an
// error's by its code, 200 otherwise.
func modernStatus(probe jsonrpc.Probe, answer mcp.JSONRPCMessage) int {
	e, isErr := answer.(mcp.JSONRPCError)
	if !isErr || len(probe.Params.Meta.ProtocolVersion) == 0 {
		return http.StatusOK
	}
	switch e.Error.Code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func probeID(p jsonrpc.Probe) any {
	var id any
	_ = json.Unmarshal(p.ID, &id)
	return id
}
