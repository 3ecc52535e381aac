package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type helloIn struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

type helloOut struct {
	Greeting string `json:"greeting"`
}

type sumIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// hello is a tool built by a function of its own.
func hello() sdk.Tool[helloIn, helloOut] {
	return sdk.Tool[helloIn, helloOut]{
		Name: "example_greet", Description: "Greets someone.", ReadOnly: true,
		Handler: func(_ context.Context, in helloIn) (helloOut, error) {
			return helloOut{Greeting: "Hello, " + in.Name}, nil
		},
	}
}

// sum is another, of other input and output types.
func sum() sdk.Tool[sumIn, sumOut] {
	return sdk.Tool[sumIn, sumOut]{
		Name: "example_sum", Description: "Adds two numbers.", SuccessStatus: 201,
		Handler: func(_ context.Context, in sumIn) (sumOut, error) {
			return sumOut{Sum: in.A + in.B}, nil
		},
	}
}

// A plugin registers tools of different types in one list.
func ExampleAddTools() {
	p := sdk.New("example", "1.0.0")
	sdk.AddTools(p, hello(), sum())
	for _, t := range sdktest.Tools(p) {
		fmt.Println(t.Name)
	}
	// Output:
	// example_greet
	// example_sum
}

// AddTools declares each tool as AddTool would: in order, with its
// annotations, status and handler.
func TestAddToolsDeclaresEachToolAsAddToolDoes(t *testing.T) {
	listed := sdk.New("example", "1.0.0")
	sdk.AddTools(listed, hello(), sum())
	single := sdk.New("example", "1.0.0")
	sdk.AddTool(single, hello())
	sdk.AddTool(single, sum())

	got, want := sdktest.Tools(listed), sdktest.Tools(single)
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("tools: got %d, want 2 on both plugins", len(got))
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Errorf("tool %d: AddTools declared %s, AddTool %s", i, g, w)
		}
	}
	res := sdktest.Invoke(context.Background(), listed, "example_sum", []byte(`{"a":2,"b":3}`))
	if res.Err != nil || string(res.Output) != `{"sum":5}` || res.Status != 201 {
		t.Errorf("example_sum: output %s, status %d, error %v; want {\"sum\":5}, 201", res.Output, res.Status, res.Err)
	}
}

// A duplicate in the list panics as a second AddTool of the name does.
func TestAddToolsPanicsOnADuplicateName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AddTools with a name twice did not panic")
		}
	}()
	sdk.AddTools(sdk.New("dup", "1.0.0"), hello(), hello())
}

// Tools of different input and output types share one list as ToolValues.
func ExampleToolValue() {
	tools := []sdk.ToolValue{hello(), sum()}
	p := sdk.New("example", "1.0.0")
	sdk.AddTools(p, tools...)
	fmt.Println(len(sdktest.Tools(p)))
	// Output: 2
}
