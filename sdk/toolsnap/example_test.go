package toolsnap_test

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/toolsnap"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

type echoOut struct {
	Text string `json:"text"`
}

func newPlugin() *sdk.Plugin {
	p := sdk.New("echo", "1.0.0")
	sdk.AddTool(p, sdk.Tool[echoIn, echoOut]{
		Name: "echo_say", Title: "Say", Description: "Repeats the text.", ReadOnly: true,
		Handler: func(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil },
	})
	return p
}

// A plugin's tests hold its tools to the snapshots committed under
// testdata/toolsnaps: a changed name, description, schema or annotation
// fails the test until UPDATE_TOOLSNAPS=1 rewrites the files for review.
// Check needs the *testing.T of a test, so this example only compiles.
func ExampleCheck() {
	TestToolSnapshots := func(t *testing.T) {
		toolsnap.Check(t, newPlugin(), "testdata/toolsnaps")
	}
	_ = TestToolSnapshots
}

// derivedSchemas stands for the table CheckDerived generates beside the
// plugin (schemas_derived.go), which New hands sdk.WithDerivedSchemas.
var derivedSchemas = map[string]sdk.ToolSchemas{}

// A plugin that starts often reads its tools' schemas from a generated
// table instead of deriving them by reflection at each start; its test
// keeps the table true to the types, and UPDATE_TOOLSNAPS=1 writes it.
// CheckDerived needs the testing.TB of a test, so this example only
// compiles.
func ExampleCheckDerived() {
	TestToolSnapshots := func(t *testing.T) {
		p := newPlugin()
		toolsnap.Check(t, p, "testdata/toolsnaps")
		toolsnap.CheckDerived(t, p, derivedSchemas, "schemas_derived.go", "derivedSchemas")
	}
	_ = TestToolSnapshots
}
