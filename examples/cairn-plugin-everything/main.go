// Command cairn-plugin-everything is a cairn plugin built only on the SDK
// that provides the fixtures the official MCP conformance suite
// (@modelcontextprotocol/conformance) calls: tools returning text, image,
// audio and error results, progress and log notifications, a JSON Schema
// 2020-12 input schema, and test:// resources. Loaded into cairn, it shows
// that what a plugin says reaches the client through the host.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk"
)

// A 1×1 red PNG and a 44-byte silent WAV header with one sample: the
// smallest payloads the suite accepts as image and audio content.
var (
	redPixelPNG = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV   = mustBase64("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// NoInput is the input of the argument-less fixtures.
type NoInput struct{}

// TextOutput is a fixture's JSON answer; the host also sends it as the
// first text content block (docs/decisions.md D3).
type TextOutput struct {
	Text string `json:"text"`
}

// MediaOutput carries extra content blocks after the JSON text.
type MediaOutput struct {
	Text    string `json:"text"`
	content []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o MediaOutput) ExtraContent() []sdk.Content { return o.content }

// SchemaInput matches json_schema_2020_12_tool's raw input schema.
type SchemaInput struct {
	Name    string `json:"name,omitempty"`
	Address *struct {
		Street string `json:"street,omitempty"`
		City   string `json:"city,omitempty"`
	} `json:"address,omitempty"`
}

// jsonSchema202012 keeps the 2020-12 keywords ($schema, $defs, $ref) the
// suite checks survive the host's listing.
var jsonSchema202012 = json.RawMessage(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"}
  },
  "additionalProperties": false
}`)

// SamplingInput is test_sampling's argument.
type SamplingInput struct {
	Prompt string `json:"prompt" description:"The prompt to send to the client's model."`
}

// ElicitationInput is test_elicitation's argument.
type ElicitationInput struct {
	Message string `json:"message" description:"The message to show the user."`
}

// The schemas of the elicitation fixtures, as the suite expects them.
var (
	userInfoSchema = json.RawMessage(`{"type":"object","properties":{
  "username":{"type":"string","description":"User's response"},
  "email":{"type":"string","description":"User's email address"}},
  "required":["username","email"]}`)
	defaultsSchema = json.RawMessage(`{"type":"object","properties":{
  "name":{"type":"string","default":"John Doe"},
  "age":{"type":"integer","default":30},
  "score":{"type":"number","default":95.5},
  "status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
  "verified":{"type":"boolean","default":true}}}`)
	enumsSchema = json.RawMessage(`{"type":"object","properties":{
  "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
  "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
  "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
  "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
  "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
)

// elicit asks the user with schema and reports the answer after lead.
func elicit(ctx context.Context, message string, schema json.RawMessage, lead string) (TextOutput, error) {
	res, err := sdk.Elicit(ctx, sdk.ElicitRequest{Message: message, RequestedSchema: schema})
	if err != nil {
		return TextOutput{}, err
	}
	content, _ := json.Marshal(res.Content)
	return TextOutput{Text: fmt.Sprintf("%s: action=%s, content=%s", lead, res.Action, content)}, nil
}

func newPlugin() *sdk.Plugin {
	p := sdk.New("everything", "1.0.0",
		sdk.WithDescription("Conformance fixtures: every kind of tool result, notification and resource a plugin can give"),
		sdk.WithToolset("everything"))

	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_simple_text", Title: "Simple text",
		Description: "Conformance fixture: answers with text.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (TextOutput, error) {
			return TextOutput{Text: "This is a simple text response for testing."}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, MediaOutput]{
		Name: "test_image_content", Title: "Image content",
		Description: "Conformance fixture: answers with a 1×1 PNG image.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (MediaOutput, error) {
			return MediaOutput{Text: "an image", content: []sdk.Content{sdk.ImageContent(redPixelPNG, "image/png")}}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, MediaOutput]{
		Name: "test_audio_content", Title: "Audio content",
		Description: "Conformance fixture: answers with a short WAV clip.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (MediaOutput, error) {
			return MediaOutput{Text: "a sound", content: []sdk.Content{sdk.AudioContent(silentWAV, "audio/wav")}}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, MediaOutput]{
		Name: "test_embedded_resource", Title: "Embedded resource",
		Description: "Conformance fixture: answers with a text resource embedded in the result.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (MediaOutput, error) {
			return MediaOutput{Text: "an embedded resource", content: []sdk.Content{
				sdk.EmbeddedResource("test://embedded-resource", "text/plain", "This is an embedded resource content."),
			}}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, MediaOutput]{
		Name: "test_multiple_content_types", Title: "Mixed content",
		Description: "Conformance fixture: answers with text, an image and an embedded resource.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (MediaOutput, error) {
			return MediaOutput{Text: "Multiple content types test:", content: []sdk.Content{
				sdk.ImageContent(redPixelPNG, "image/png"),
				sdk.EmbeddedResource("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_error_handling", Title: "Error result",
		Description: "Conformance fixture: always fails with a tool error.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, NoInput) (TextOutput, error) {
			return TextOutput{}, sdk.NewError(400, "ERR_TEST_FAILURE", "This tool intentionally returns an error for testing")
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_tool_with_progress", Title: "Progress",
		Description: "Conformance fixture: reports progress 0, 50 and 100 of 100.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(ctx context.Context, _ NoInput) (TextOutput, error) {
			for _, done := range []float64{0, 50, 100} {
				sdk.ReportProgress(ctx, done, 100, fmt.Sprintf("%.0f%% done", done))
				time.Sleep(50 * time.Millisecond)
			}
			return TextOutput{Text: "Progress complete"}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_tool_with_logging", Title: "Logging",
		Description: "Conformance fixture: logs three messages through the host while it runs.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(ctx context.Context, _ NoInput) (TextOutput, error) {
			// Each line reaches the calling client as notifications/message
			// when it asked for info or lower.
			for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				sdk.Log(ctx, sdk.LogInfo, msg, map[string]any{"tool": "test_tool_with_logging"})
				time.Sleep(50 * time.Millisecond)
			}
			return TextOutput{Text: "Logging complete"}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[SamplingInput, TextOutput]{
		Name: "test_sampling", Title: "Sampling",
		Description: "Conformance fixture: asks the client's model to answer the prompt (sampling/createMessage).",
		ReadOnly:    true, OpenWorld: true,
		Handler: func(ctx context.Context, in SamplingInput) (TextOutput, error) {
			res, err := sdk.Sample(ctx, sdk.SampleRequest{
				Messages:  []sdk.SamplingMessage{{Role: "user", Content: sdk.TextContent(in.Prompt)}},
				MaxTokens: 100,
			})
			if err != nil {
				return TextOutput{}, err
			}
			return TextOutput{Text: "LLM response: " + res.Content.Text}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[ElicitationInput, TextOutput]{
		Name: "test_elicitation", Title: "Elicitation",
		Description: "Conformance fixture: asks the user for a username and email (elicitation/create).",
		ReadOnly:    true, OpenWorld: true,
		Handler: func(ctx context.Context, in ElicitationInput) (TextOutput, error) {
			return elicit(ctx, in.Message, userInfoSchema, "User response")
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_elicitation_sep1034_defaults", Title: "Elicitation defaults",
		Description: "Conformance fixture: asks the user with a default for every primitive type (SEP-1034).",
		ReadOnly:    true, OpenWorld: true,
		Handler: func(ctx context.Context, _ NoInput) (TextOutput, error) {
			return elicit(ctx, "Please review and update the form fields with defaults", defaultsSchema, "Elicitation completed")
		},
	})
	sdk.AddTool(p, sdk.Tool[NoInput, TextOutput]{
		Name: "test_elicitation_sep1330_enums", Title: "Elicitation enums",
		Description: "Conformance fixture: asks the user with every enum variant (SEP-1330).",
		ReadOnly:    true, OpenWorld: true,
		Handler: func(ctx context.Context, _ NoInput) (TextOutput, error) {
			return elicit(ctx, "Please select options from the enum fields", enumsSchema, "Elicitation completed")
		},
	})
	sdk.AddTool(p, sdk.Tool[SchemaInput, TextOutput]{
		Name: "json_schema_2020_12_tool", Title: "JSON Schema 2020-12",
		Description: "Conformance fixture: an input schema using $schema, $defs and $ref.",
		ReadOnly:    true, Idempotent: true,
		InputSchema: jsonSchema202012,
		Handler: func(_ context.Context, in SchemaInput) (TextOutput, error) {
			return TextOutput{Text: "hello " + in.Name}, nil
		},
	})

	p.AddResources(sdk.ResourceSet{
		Fixed: []sdk.Resource{
			{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
			{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource", MIMEType: "image/png"},
			{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to", MIMEType: "text/plain"},
		},
		Templates: []sdk.ResourceTemplate{{URITemplate: "test://template/{id}/data", Name: "template", Description: "Data for an id", MIMEType: "application/json"}},
		Prefix:    "test://", Read: readResource,
	})
	// Prompts the suite gets: text, arguments, an embedded resource, an
	// image.
	p.AddPrompt(sdk.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments",
		Render: func(context.Context, map[string]string) (sdk.PromptResult, error) {
			return sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: "user", Text: "This is a simple prompt for testing."}}}, nil
		}})
	p.AddPrompt(sdk.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with required arguments",
		Arguments: []sdk.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}},
		Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
			return sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: "user", Text: "Prompt with arguments: arg1='" + args["arg1"] + "', arg2='" + args["arg2"] + "'"}}}, nil
		}})
	p.AddPrompt(sdk.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding the resource it names",
		Arguments: []sdk.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
		Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
			res := sdk.EmbeddedResource(args["resourceUri"], "text/plain", "Embedded resource content for testing.")
			return sdk.PromptResult{Messages: []sdk.PromptMessage{
				{Role: "user", Content: &res},
				{Role: "user", Text: "Please process the embedded resource above."},
			}}, nil
		}})
	p.AddPrompt(sdk.Prompt{Name: "test_prompt_with_image", Description: "A prompt carrying an image",
		Render: func(context.Context, map[string]string) (sdk.PromptResult, error) {
			img := sdk.ImageContent(redPixelPNG, "image/png")
			return sdk.PromptResult{Messages: []sdk.PromptMessage{
				{Role: "user", Content: &img},
				{Role: "user", Text: "Please analyze the image above."},
			}}, nil
		}})
	return p
}

func main() {
	sdk.Serve(newPlugin())
}

// readResource serves the test:// resources and template.
func readResource(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
	switch {
	case uri == "test://static-text":
		return []sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}, nil
	case uri == "test://static-binary":
		return []sdk.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: redPixelPNG}}, nil
	case uri == "test://watched-resource":
		return []sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "watched"}}, nil
	case strings.HasPrefix(uri, "test://template/") && strings.HasSuffix(uri, "/data"):
		id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
		if id == "" || strings.Contains(id, "/") {
			return nil, sdk.InvalidInput("uri", "pattern", "use test://template/{id}/data with one path segment as id")
		}
		body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		return []sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}, nil
	}
	return nil, sdk.NotFound("ERR_NOT_FOUND", "uri", "no resource "+uri+"; see resources/list")
}
