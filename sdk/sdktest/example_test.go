package sdktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// calc is the plugin the examples drive: a tool, an event subscription,
// a prompt, a completer, resources and lifecycle hooks.
func calc() *sdk.Plugin {
	p := sdk.New("calc", "1.0.0")
	sdk.AddTool(p, sdk.Tool[addIn, addOut]{
		Name: "calc_add", Description: "Adds two numbers.", ReadOnly: true,
		Handler: func(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil },
	})
	p.OnEvent("calc.*", func(_ context.Context, ev sdk.Event) error {
		fmt.Println("heard", ev.Type)
		return nil
	})
	p.AddPrompt(sdk.Prompt{
		Name: "explain", Arguments: []sdk.PromptArgument{{Name: "op", Required: true}},
		Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
			return sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: "user", Text: "Explain " + args["op"] + "."}}}, nil
		},
	})
	p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		return sdk.MatchPrefix([]string{"add", "subtract"}, req.Value), req.Argument == "op", nil
	})
	p.AddResources(sdk.ResourceSet{
		Prefix:    "calc://",
		Fixed:     []sdk.Resource{{URI: "calc://constants", Name: "constants"}},
		Templates: []sdk.ResourceTemplate{{URITemplate: "calc://constants/{name}", Name: "constant"}},
		Read: func(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
			if uri != "calc://constants" {
				return nil, sdk.NotFound("ERR_RESOURCE_NOT_FOUND", "uri", "no resource "+uri)
			}
			return []sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: `{"pi":3.14159}`}}, nil
		},
	})
	p.AddHooks(sdk.Hooks{
		Configure: func(_ context.Context, cfg sdk.Config) error {
			fmt.Println("configured for", cfg.Mode)
			return nil
		},
		Stop: func(context.Context) error {
			fmt.Println("stopped")
			return nil
		},
	})
	return p
}

func ExampleConfigure() {
	p := calc()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{DataDir: "/tmp/calc", Mode: "TEST"}); err != nil {
		fmt.Println(err)
	}
	// Output: configured for TEST
}

func ExampleInvoke() {
	p := calc()
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "ci", Source: "env"})
	res := sdktest.Invoke(ctx, p, "calc_add", []byte(`{"a":2,"b":3}`))
	fmt.Println(res.Status, string(res.Output))
	res = sdktest.Invoke(ctx, p, "calc_add", []byte(`{"a":"two"}`))
	fmt.Println(res.Status, res.Err.Code)
	// Output:
	// 200 {"sum":5}
	// 400 ERR_INVALID_INPUT
}

func ExampleDeliverEvent() {
	p := calc()
	err := sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: "calc.reset", Data: json.RawMessage(`{}`)})
	fmt.Println(err)
	// Output:
	// heard calc.reset
	// <nil>
}

func ExampleHealth() {
	p := calc()
	fmt.Println(sdktest.Health(context.Background(), p).Status)
	// Output: ok
}

func ExamplePrompts() {
	list, _ := sdktest.Prompts(context.Background(), calc())
	fmt.Println(list[0].Name)
	// Output: explain
}

func ExampleGetPrompt() {
	res, _ := sdktest.GetPrompt(context.Background(), calc(), "explain", map[string]string{"op": "add"})
	fmt.Println(res.Messages[0].Text)
	// Output: Explain add.
}

func ExampleComplete() {
	values, _ := sdktest.Complete(context.Background(), calc(), sdk.CompletionRequest{
		Ref: sdk.CompletionRef{RefType: "prompt", Name: "explain"}, Argument: "op", Value: "su",
	})
	fmt.Println(values)
	// Output: [subtract]
}

func ExampleListResources() {
	res, tpl, _ := sdktest.ListResources(context.Background(), calc())
	fmt.Println(res[0].URI, tpl[0].URITemplate)
	// Output: calc://constants calc://constants/{name}
}

func ExampleReadResource() {
	contents, _ := sdktest.ReadResource(context.Background(), calc(), "calc://constants")
	fmt.Println(contents[0].Text)
	// Output: {"pi":3.14159}
}

func ExampleTools() {
	for _, t := range sdktest.Tools(calc()) {
		fmt.Println(t.Name, t.ReadOnly)
	}
	// Output: calc_add true
}

func ExampleSubscriptions() {
	fmt.Println(sdktest.Subscriptions(calc()))
	// Output: [calc.*]
}

func ExampleStop() {
	p := calc()
	ctx := context.Background()
	_ = sdktest.Configure(ctx, p, sdk.Config{Mode: "TEST"})
	fmt.Println(sdktest.Stop(ctx, p))
	// Output:
	// configured for TEST
	// stopped
	// <nil>
}

// CheckSchemas catches a schema that does not compile, which start-up
// would only meet at the tool's first call.
func ExampleCheckSchemas() {
	p := calc()
	fmt.Println(sdktest.CheckSchemas(p))
	sdk.AddTool(p, sdk.Tool[addIn, addOut]{
		Name: "calc_bad", Description: "Declares a broken schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`),
		Handler:     func(context.Context, addIn) (addOut, error) { return addOut{}, nil },
	})
	err := sdktest.CheckSchemas(p)
	fmt.Println(strings.HasPrefix(err.Error(), `tool "calc_bad" input schema`))
	// Output:
	// <nil>
	// true
}

// DerivedSchemas derives each tool's schemas from its Go types afresh,
// whatever table the plugin was built with: what that table must hold.
func ExampleDerivedSchemas() {
	s := sdktest.DerivedSchemas(calc())["calc_add"]
	fmt.Println(s.Input)
	fmt.Println(s.Output)
	// Output:
	// {"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["a","b"]}
	// {"properties":{"sum":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["sum"]}
}
