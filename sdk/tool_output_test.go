package sdk_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type countIn struct {
	N int `json:"n" jsonschema:"minimum=0,maximum=10"`
}

type countOut struct {
	Count int `json:"count"`
}

// Outputs are checked against the tool's output schema in tests (and in
// CAIRN_MODE=TEST): an output that breaks it is a 500, not a silent lie.
func TestInvokeChecksOutputsAgainstTheirSchema(t *testing.T) {
	p := sdk.New("outcheck", "1.0.0")
	sdk.AddTool(p, sdk.Tool[countIn, countOut]{
		Name:         "outcheck_count",
		Description:  "Count to n.",
		OutputSchema: json.RawMessage(`{"type":"object","required":["count"],"properties":{"count":{"type":"integer","maximum":5}}}`),
		Handler: func(_ context.Context, in countIn) (countOut, error) {
			return countOut{Count: in.N}, nil
		},
	})
	for _, c := range []struct {
		n    int
		want string
	}{
		{3, ""},
		{5, ""},
		{7, errs.ToolOutputMalformed},
	} {
		args, _ := json.Marshal(countIn{N: c.n})
		res := sdktest.Invoke(context.Background(), p, "outcheck_count", args)
		switch {
		case c.want == "" && res.Err != nil:
			t.Errorf("n=%d: unexpected error %v", c.n, res.Err)
		case c.want != "" && (res.Err == nil || res.Err.Code != c.want):
			t.Errorf("n=%d: got %+v, want %s", c.n, res.Err, c.want)
		case c.want != "" && res.Err.Details["field"] != "count":
			t.Errorf("n=%d: details %v should name the field count", c.n, res.Err.Details)
		}
	}
}
