package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// checkOutput is the host's one look at a plugin's success output before
// its bytes go to the client as they are (jsonrpc.AppendMessage): one JSON value by
// rawjson's rules, on one line. A plugin that breaks it gets the caller a
// typed error, never a broken or missing response. Output spread over lines
// (a hand-written plugin's indented JSON) is compacted.
func checkOutput(tool string, out []byte) ([]byte, *errs.Error) {
	if len(bytes.Trim(out, " \t\r\n")) == 0 {
		return nil, errs.Newf(502, errs.ToolOutputMalformed, "the plugin of %s answered with blank output, not a JSON value", tool).
			With("field", "output").With("constraint", rawjson.ConstraintJSON)
	}
	if e := rawjson.Check(out, jsonrpc.MaxOutputDepth); e != nil {
		field, _ := e.Details["field"].(string)
		constraint, _ := e.Details["constraint"].(string)
		return nil, errs.Newf(502, errs.ToolOutputMalformed, "the plugin of %s answered with output that is not valid JSON (%s, at %q)", tool, constraint, field).
			With("field", "output"+pathSuffix(field)).With("constraint", constraint)
	}
	if bytes.IndexByte(out, '\n') < 0 && bytes.IndexByte(out, '\r') < 0 {
		return out, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, out); err != nil {
		return nil, errs.Newf(502, errs.ToolOutputMalformed, "the plugin of %s answered with output that is not valid JSON: %v", tool, err)
	}
	return buf.Bytes(), nil
}

// pathSuffix joins a JSON path inside the output to "output".
func pathSuffix(field string) string {
	switch {
	case field == "":
		return ""
	case field[0] == '[':
		return field
	default:
		return "." + field
	}
}
