package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
)

// fakeClient answers sampling and elicitation as a client would, for the
// examples.
func fakeClient(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sampling/createMessage":
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Buy milk and eggs."},"model":"small-1","stopReason":"endTurn"}`), nil
	case "elicitation/create":
		return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
	}
	return nil, sdk.NewError(404, "ERR_NOT_FOUND", "no method "+method)
}

// Sample asks the calling client's model for a completion.
func ExampleSample() {
	ctx := sdk.WithClientAsker(context.Background(), fakeClient)
	res, err := sdk.Sample(ctx, sdk.SampleRequest{
		Messages:  []sdk.SamplingMessage{{Role: "user", Content: sdk.TextContent("Summarise: milk, eggs")}},
		MaxTokens: 100,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Model, res.Content.Text)
	// Output: small-1 Buy milk and eggs.
}

// A client that cannot be asked fails the request with 501.
func ExampleSampleRequest() {
	_, err := sdk.Sample(context.Background(), sdk.SampleRequest{SystemPrompt: "Be brief."})
	fmt.Println(err.(*sdk.Error).Code)
	// Output: ERR_CLIENT_UNSUPPORTED
}

func ExampleSampleResult() {
	ctx := sdk.WithClientAsker(context.Background(), fakeClient)
	res, _ := sdk.Sample(ctx, sdk.SampleRequest{Messages: []sdk.SamplingMessage{{Role: "user", Content: sdk.TextContent("hi")}}})
	fmt.Println(res.Role, res.StopReason)
	// Output: assistant endTurn
}

func ExampleSamplingMessage() {
	m := sdk.SamplingMessage{Role: "user", Content: sdk.ImageContent([]byte{0x89, 'P', 'N', 'G'}, "image/png")}
	fmt.Println(m.Role, m.Content.Type)
	// Output: user image
}

// Elicit asks the calling client's user for input matching a flat schema.
func ExampleElicit() {
	ctx := sdk.WithClientAsker(context.Background(), fakeClient)
	res, err := sdk.Elicit(ctx, sdk.ElicitRequest{
		Message:         "Delete all notes?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Action, res.Content["confirm"])
	// Output: accept true
}

// An elicitation needs the schema of what it asks for.
func ExampleElicitRequest() {
	ctx := sdk.WithClientAsker(context.Background(), fakeClient)
	_, err := sdk.Elicit(ctx, sdk.ElicitRequest{Message: "Your name?"})
	fmt.Println(err.(*sdk.Error).Details["field"])
	// Output: RequestedSchema
}

func ExampleElicitResult() {
	res := sdk.ElicitResult{Action: "decline"}
	if res.Action != "accept" {
		fmt.Println("nothing deleted")
	}
	// Output: nothing deleted
}

// Tests stand in for the client with their own ClientAsker.
func ExampleWithClientAsker() {
	var asked []string
	ctx := sdk.WithClientAsker(context.Background(), func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method)
		return fakeClient(ctx, method, params)
	})
	_, _ = sdk.Sample(ctx, sdk.SampleRequest{Messages: []sdk.SamplingMessage{{Role: "user", Content: sdk.TextContent("hi")}}})
	fmt.Println(asked)
	// Output: [sampling/createMessage]
}

func ExampleClientAsker() {
	var ask sdk.ClientAsker = fakeClient
	raw, _ := ask(context.Background(), "elicitation/create", json.RawMessage(`{}`))
	fmt.Println(string(raw))
	// Output: {"action":"accept","content":{"confirm":true}}
}
