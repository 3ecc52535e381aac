package sdk_test

import (
	"context"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// greeter builds a one-tool plugin with opts; input, when set, is the
// tool's own input schema.
func greeter(input []byte, opts ...sdk.Option) *sdk.Plugin {
	p := sdk.New("greet", "1.0.0", opts...)
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name: "greet_hello", Description: "Greets someone.", ReadOnly: true, InputSchema: input,
		Handler: func(_ context.Context, in greetIn) (greetOut, error) { return greetOut{"hello " + in.Name}, nil },
	})
	return p
}

// A plugin built with its generated table (toolsnap.CheckDerived writes
// it beside the plugin) reads its tools' schemas from the table rather
// than deriving them by reflection each time it starts.
func ExampleWithDerivedSchemas() {
	table := sdktest.DerivedSchemas(greeter(nil))
	p := greeter(nil, sdk.WithDerivedSchemas(table))
	fmt.Println(string(sdktest.Tools(p)[0].InputSchema) == table["greet_hello"].Input)
	// Output: true
}

// ToolSchemas holds a tool's derived input and output schemas; "" marks a
// side the tool declares itself.
func ExampleToolSchemas() {
	s := sdktest.DerivedSchemas(greeter([]byte(`{"type":"object"}`)))["greet_hello"]
	fmt.Printf("input %q\noutput %s\n", s.Input, s.Output)
	// Output:
	// input ""
	// output {"properties":{"greeting":{"type":"string"}},"additionalProperties":false,"type":"object","required":["greeting"]}
}
