package sdk_test

import (
	"context"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// reviewPrompt is a prompt a client offers its user as a slash command.
var reviewPrompt = sdk.Prompt{
	Name: "review", Title: "Review a note", Description: "Asks for a review of a note.",
	Arguments: []sdk.PromptArgument{{Name: "id", Description: "The note to review", Required: true}},
	Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
		return sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: "user", Text: "Review note " + args["id"] + "."}}}, nil
	},
}

// AddPrompt declares a prompt; the SDK checks its required arguments
// before Render runs.
func ExamplePlugin_AddPrompt() {
	p := sdk.New("notes", "1.0.0")
	p.AddPrompt(reviewPrompt)
	ctx := context.Background()
	res, _ := sdktest.GetPrompt(ctx, p, "review", map[string]string{"id": "N-1"})
	fmt.Println(res.Messages[0].Role, res.Messages[0].Text)
	_, err := sdktest.GetPrompt(ctx, p, "review", nil)
	fmt.Println(err.(*sdk.Error).Details["field"])
	// Output:
	// user Review note N-1.
	// id
}

func ExamplePrompt() {
	fmt.Println(reviewPrompt.Name, len(reviewPrompt.Arguments))
	// Output: review 1
}

func ExamplePromptArgument() {
	a := sdk.PromptArgument{Name: "tone", Description: "formal or casual"}
	fmt.Println(a.Name, a.Required)
	// Output: tone false
}

// A rendered prompt's messages are text, or a block of another kind.
func ExamplePromptResult() {
	res := sdk.PromptResult{
		Description: "A note with its photo",
		Messages: []sdk.PromptMessage{
			{Role: "user", Text: "Describe this photo."},
			{Role: "user", Content: &sdk.Content{Type: "image", Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"}},
		},
	}
	fmt.Println(len(res.Messages), res.Messages[1].Content.Type)
	// Output: 2 image
}

func ExamplePromptMessage() {
	m := sdk.PromptMessage{Role: "assistant", Content: &sdk.Content{Type: "resource", URI: "notes://N-1", MIMEType: "text/markdown", Text: "# Buy milk"}}
	fmt.Println(m.Role, m.Content.URI)
	// Output: assistant notes://N-1
}

// ListPromptsWith serves prompts that come and go while the plugin runs
// (files in a folder, say); PromptsChanged tells the host to list them
// again.
func ExamplePlugin_ListPromptsWith() {
	p := sdk.New("notes", "1.0.0")
	names := []string{"standup", "retro"}
	p.ListPromptsWith(func(context.Context) ([]sdk.Prompt, error) {
		var out []sdk.Prompt
		for _, n := range names {
			out = append(out, sdk.Prompt{Name: n, Description: "The " + n + " template."})
		}
		return out, nil
	})
	list, _ := sdktest.Prompts(context.Background(), p)
	for _, pr := range list {
		fmt.Println(pr.Name)
	}
	// Output:
	// retro
	// standup
}

// PromptsChanged publishes the change on the host's bus; in process,
// without a host, it says so.
func ExamplePlugin_PromptsChanged() {
	p := sdk.New("notes", "1.0.0")
	fmt.Println(p.PromptsChanged(context.Background()))
	// Output: sdk: publish prompts.changed: plugin is not connected to a host
}

// CompleteWith suggests values for prompt arguments and resource template
// variables as the user types them.
func ExamplePlugin_CompleteWith() {
	p := sdk.New("notes", "1.0.0")
	p.AddPrompt(reviewPrompt)
	p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		if req.Ref.RefType != "prompt" || req.Ref.Name != "review" || req.Argument != "id" {
			return nil, false, nil
		}
		return sdk.MatchPrefix([]string{"N-1", "N-2", "M-1"}, req.Value), true, nil
	})
	values, _ := sdktest.Complete(context.Background(), p, sdk.CompletionRequest{
		Ref: sdk.CompletionRef{RefType: "prompt", Name: "review"}, Argument: "id", Value: "n",
	})
	fmt.Println(values)
	// Output: [N-1 N-2]
}

// A Completer that does not know the argument lets the next one answer.
func ExampleCompleter() {
	var tones sdk.Completer = func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		if req.Argument != "tone" {
			return nil, false, nil
		}
		return sdk.MatchPrefix([]string{"formal", "casual"}, req.Value), true, nil
	}
	values, ok, _ := tones(context.Background(), sdk.CompletionRequest{Argument: "tone", Value: "f"})
	fmt.Println(values, ok)
	// Output: [formal] true
}

// A resource template's variable is completed under the template's URI.
func ExampleCompletionRef() {
	ref := sdk.CompletionRef{RefType: "resource", Name: "notes://{id}"}
	fmt.Println(ref.RefType, ref.Name)
	// Output: resource notes://{id}
}

// Context holds the arguments the user has already given.
func ExampleCompletionRequest() {
	req := sdk.CompletionRequest{
		Ref:      sdk.CompletionRef{RefType: "prompt", Name: "move"},
		Argument: "to", Value: "do",
		Context: map[string]string{"from": "todo"},
	}
	fmt.Println(req.Argument, req.Value, req.Context["from"])
	// Output: to do todo
}

func ExampleMatchPrefix() {
	fmt.Println(sdk.MatchPrefix([]string{"Beta", "alpha", "beta", "alpha"}, "A"))
	// Output: [alpha]
}
