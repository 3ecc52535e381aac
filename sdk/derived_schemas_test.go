package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type echoIn struct {
	Word string `json:"word" jsonschema:"minLength=1,maxLength=8"`
}

type echoOut struct {
	Word string `json:"word"`
}

func echoTool(name string, in []byte) sdk.Tool[echoIn, echoOut] {
	return sdk.Tool[echoIn, echoOut]{
		Name: name, Title: "Echo", Description: "Echoes a word.", InputSchema: in,
		Handler: func(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil },
	}
}

// A tool whose schemas the generated table holds takes them from it, not
// from reflection; DerivedSchemas derives them afresh all the same, so a
// table that no longer matches its types is caught (toolsnap.CheckDerived).
func TestDerivedSchemasAreReadFromTheTable(t *testing.T) {
	// A table entry that differs from what the types derive, so which
	// one AddTool used shows.
	tableIn := `{"additionalProperties":false,"properties":{"word":{"maxLength":3,"minLength":1,"type":"string"}},"required":["word"],"type":"object"}`
	p := sdk.New("derived", "0.1.0", sdk.WithDerivedSchemas(map[string]sdk.ToolSchemas{
		"echo": {Input: tableIn, Output: string(schema.For[echoOut]())},
	}))
	sdk.AddTool(p, echoTool("echo", nil))
	sdk.AddTool(p, echoTool("echo_untabled", nil))
	sdk.AddTool(p, echoTool("echo_explicit", []byte(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"],"additionalProperties":false}`)))

	infos := map[string]sdk.ToolInfo{}
	for _, ti := range sdktest.Tools(p) {
		infos[ti.Name] = ti
	}
	if got := string(infos["echo"].InputSchema); got != tableIn {
		t.Fatalf("echo's input schema is not the table's:\n%s", got)
	}
	derivedIn := string(schema.For[echoIn]())
	if got := string(infos["echo_untabled"].InputSchema); got != derivedIn {
		t.Fatalf("a tool the table lacks is not derived:\n%s", got)
	}
	// The table's schema is the one calls are checked against.
	res := sdktest.Invoke(context.Background(), p, "echo", []byte(`{"word":"long"}`))
	if res.Err == nil || !strings.Contains(res.Err.Error(), "at most 3 characters") {
		t.Fatalf("the table's maxLength 3 was not applied: %+v", res)
	}

	fresh := sdktest.DerivedSchemas(p)
	if fresh["echo"].Input != derivedIn || fresh["echo"].Output != string(schema.For[echoOut]()) {
		t.Fatalf("DerivedSchemas did not derive echo afresh: %+v", fresh["echo"])
	}
	if s := fresh["echo_explicit"]; s.Input != "" || s.Output == "" {
		t.Fatalf("an explicit input schema is not derived, its output is: %+v", s)
	}
}
