package sdk_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type noteIn struct {
	Title string `json:"title" jsonschema:"minLength=1,maxLength=80"`
}

type noteOut struct {
	ID string `json:"id"`
}

// AddTool declares a tool from its input and output types: the SDK derives
// both schemas and checks every call's arguments before the handler runs.
func ExampleAddTool() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name:          "notes_create",
		Description:   "Creates a note.",
		SuccessStatus: 201,
		Handler: func(_ context.Context, in noteIn) (noteOut, error) {
			return noteOut{ID: "N-1"}, nil
		},
	})
	ctx := context.Background()
	ok := sdktest.Invoke(ctx, p, "notes_create", []byte(`{"title":"Buy milk"}`))
	fmt.Println(ok.Status, string(ok.Output))
	bad := sdktest.Invoke(ctx, p, "notes_create", []byte(`{"title":""}`))
	fmt.Println(bad.Status, bad.Err.Code, bad.Err.Details["field"])
	// Output:
	// 201 {"id":"N-1"}
	// 400 ERR_INVALID_INPUT title
}

// Tool's annotations tell clients how the tool behaves; ReadOnly tools
// are the only ones a READONLY session lists.
func ExampleTool() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_find", Title: "Find a note", Description: "Finds a note by title.",
		ReadOnly: true, Idempotent: true,
		Handler: func(_ context.Context, in noteIn) (noteOut, error) {
			return noteOut{}, sdk.NotFound("ERR_NOTE_NOT_FOUND", "title", "no note titled "+in.Title)
		},
	})
	res := sdktest.Invoke(context.Background(), p, "notes_find", []byte(`{"title":"x"}`))
	fmt.Println(res.Status, res.Err.Code)
	// Output: 404 ERR_NOTE_NOT_FOUND
}

// Result is one call's outcome: the JSON output on success, the typed
// error otherwise.
func ExampleResult() {
	p := sdk.New("notes", "1.0.0", sdk.WithLogger(hclog.NewNullLogger()))
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_create", Description: "Creates a note.",
		Handler: func(context.Context, noteIn) (noteOut, error) { return noteOut{}, errors.New("disk full") },
	})
	res := sdktest.Invoke(context.Background(), p, "notes_create", []byte(`{"title":"a"}`))
	fmt.Println(res.Status, res.Err.Code, res.Output == nil)
	// Output: 500 ERR_INTERNAL true
}

// ToolInfo is a declared tool as the host learns it.
func ExampleToolInfo() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_create", Description: "Creates a note.",
		Handler: func(context.Context, noteIn) (noteOut, error) { return noteOut{}, nil },
	})
	info := sdktest.Tools(p)[0]
	fmt.Println(info.Name, info.Toolset, string(info.InputSchema) != "")
	// Output: notes_create notes true
}

// TaskOptional lets a client run a long tool as an MCP task and poll for
// its result.
func ExampleTaskSupport() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_reindex", Description: "Rebuilds the search index; takes minutes.",
		TaskSupport: sdk.TaskOptional,
		Handler: func(ctx context.Context, in noteIn) (noteOut, error) {
			sdk.ReportProgress(ctx, 1, 1, "reindexed")
			return noteOut{}, nil
		},
	})
	fmt.Println(sdktest.Tools(p)[0].TaskSupport)
	// Output: optional
}

// shot is an output that carries a picture after its JSON.
type shot struct {
	Width int `json:"width"`
	png   []byte
}

// ExtraContent adds the picture as an image block.
func (s shot) ExtraContent() []sdk.Content {
	return []sdk.Content{sdk.ImageContent(s.png, "image/png")}
}

// An output that implements ContentProvider adds blocks after the JSON
// text block of the result.
func ExampleContentProvider() {
	p := sdk.New("camera", "1.0.0")
	sdk.AddTool(p, sdk.Tool[struct{}, shot]{
		Name: "camera_shoot", Description: "Takes a picture.",
		Handler: func(context.Context, struct{}) (shot, error) {
			return shot{Width: 1, png: []byte{0x89, 'P', 'N', 'G'}}, nil
		},
	})
	res := sdktest.Invoke(context.Background(), p, "camera_shoot", nil)
	fmt.Println(string(res.Output), res.Content[0].Type, res.Content[0].MIMEType)
	// Output: {"width":1} image image/png
}

// Content is a block of a tool result or prompt message; its
// constructors fill in the fields each type uses.
func ExampleContent() {
	for _, c := range []sdk.Content{
		sdk.TextContent("hello"),
		sdk.ResourceLink("notes://N-1", "N-1", "application/json"),
	} {
		fmt.Println(c.Type, c.URI, c.Text)
	}
	// Output:
	// text  hello
	// resource_link notes://N-1 N-1
}

func ExampleTextContent() {
	c := sdk.TextContent("three notes match")
	fmt.Println(c.Type, c.Text)
	// Output: text three notes match
}

func ExampleImageContent() {
	c := sdk.ImageContent([]byte{0x89, 'P', 'N', 'G'}, "image/png")
	fmt.Println(c.Type, c.MIMEType, len(c.Data))
	// Output: image image/png 4
}

func ExampleAudioContent() {
	c := sdk.AudioContent([]byte("RIFF"), "audio/wav")
	fmt.Println(c.Type, c.MIMEType, len(c.Data))
	// Output: audio audio/wav 4
}

func ExampleEmbeddedResource() {
	c := sdk.EmbeddedResource("notes://N-1", "text/markdown", "# Buy milk")
	fmt.Println(c.Type, c.URI, c.Text)
	// Output: resource notes://N-1 # Buy milk
}

func ExampleEmbeddedBlob() {
	c := sdk.EmbeddedBlob("notes://N-1/photo", "image/png", []byte{0x89, 'P', 'N', 'G'})
	fmt.Println(c.Type, c.URI, len(c.Data))
	// Output: resource notes://N-1/photo 4
}

// A result links what the call created, so the client can read it or
// subscribe to it.
func ExampleResourceLink() {
	c := sdk.ResourceLink("notes://N-1", "N-1", "application/json")
	fmt.Println(c.Type, c.URI, c.Text)
	// Output: resource_link notes://N-1 N-1
}

// A handler returns an *Error for a failure the agent can act on; its
// status and code reach the agent in the error envelope.
func ExampleError() {
	var err error = sdk.NewError(409, sdk.CodeConflict, "the note changed since you read it")
	var e *sdk.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code)
	}
	// Output: 409 ERR_CONFLICT
}

func ExampleInvalidInput() {
	e := sdk.InvalidInput("title", "maxLength", "a title has at most 80 characters")
	fmt.Println(e.Status, e.Code, e.Details["field"], e.Details["constraint"])
	// Output: 400 ERR_INVALID_INPUT title maxLength
}

func ExampleNotFound() {
	e := sdk.NotFound("ERR_NOTE_NOT_FOUND", "id", "no note N-9")
	fmt.Println(e.Status, e.Code, e.Details["field"])
	// Output: 404 ERR_NOTE_NOT_FOUND id
}

func ExampleNewError() {
	e := sdk.NewError(423, "ERR_NOTE_LOCKED", "the note is being edited")
	fmt.Println(e.Status, e.Code, e.Message)
	// Output: 423 ERR_NOTE_LOCKED the note is being edited
}
