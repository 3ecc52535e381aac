package sdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// ClientAsker sends an MCP request (method and params as MCP defines them)
// to the client of the call running in ctx and returns its result. The SDK
// sets one for each call the host says may ask; tests set their own with
// WithClientAsker.
type ClientAsker func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// WithClientAsker returns a context whose Sample and Elicit calls go to f.
func WithClientAsker(ctx context.Context, f ClientAsker) context.Context {
	return context.WithValue(ctx, clientKey, f)
}

// SamplingMessage is one message of a sampling request or its answer: Role
// is "user" or "assistant", Content a text, image or audio block.
type SamplingMessage struct {
	Role    string
	Content Content
}

// SampleRequest asks the client's model for a completion
// (sampling/createMessage). MaxTokens is required by MCP; 0 sends 1024.
type SampleRequest struct {
	Messages     []SamplingMessage
	SystemPrompt string
	MaxTokens    int
	// Temperature is sent when not nil.
	Temperature   *float64
	StopSequences []string
	// ModelHints name models the client may prefer, best first.
	ModelHints []string
}

// SampleResult is the client model's answer.
type SampleResult struct {
	Role       string
	Content    Content
	Model      string
	StopReason string
}

// Sample asks the model of the client that made the running call for a
// completion and returns its answer. It fails with 501
// ERR_CLIENT_UNSUPPORTED when that client cannot be asked (it did not
// declare sampling, or speaks protocol 2026-07-28, which has no
// server-to-client requests), and with the client's refusal otherwise.
func Sample(ctx context.Context, req SampleRequest) (SampleResult, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 1024
	}
	params := map[string]any{"maxTokens": maxTokens}
	msgs := make([]map[string]any, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, map[string]any{"role": m.Role, "content": mcpBlock(m.Content)})
	}
	params["messages"] = msgs
	if req.SystemPrompt != "" {
		params["systemPrompt"] = req.SystemPrompt
	}
	if req.Temperature != nil {
		params["temperature"] = *req.Temperature
	}
	if len(req.StopSequences) > 0 {
		params["stopSequences"] = req.StopSequences
	}
	if len(req.ModelHints) > 0 {
		hints := make([]map[string]string, 0, len(req.ModelHints))
		for _, h := range req.ModelHints {
			hints = append(hints, map[string]string{"name": h})
		}
		params["modelPreferences"] = map[string]any{"hints": hints}
	}
	var out struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := askClient(ctx, "sampling/createMessage", params, &out); err != nil {
		return SampleResult{}, err
	}
	content, err := blockFromMCP(out.Content)
	if err != nil {
		return SampleResult{}, errs.New(502, errs.UpstreamFailed, "the client's sampling answer has unreadable content: "+err.Error())
	}
	return SampleResult{Role: out.Role, Content: content, Model: out.Model, StopReason: out.StopReason}, nil
}

// ElicitRequest asks the client's user for input (elicitation/create):
// Message says what and why; RequestedSchema is a flat JSON Schema object
// of primitive properties (string, number, integer, boolean, enums), as
// MCP restricts it.
type ElicitRequest struct {
	Message         string
	RequestedSchema json.RawMessage
}

// ElicitResult is the user's answer: Action is "accept" (Content holds
// the values), "decline" or "cancel".
type ElicitResult struct {
	Action  string
	Content map[string]any
}

// Elicit asks the user of the client that made the running call for input
// and returns the answer. It fails with 501 ERR_CLIENT_UNSUPPORTED when
// that client cannot be asked (see Sample).
func Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error) {
	schema := req.RequestedSchema
	if len(schema) == 0 {
		return ElicitResult{}, errs.Invalid("RequestedSchema", "required", "an elicitation needs the schema of what it asks for")
	}
	var out struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := askClient(ctx, "elicitation/create", map[string]any{"message": req.Message, "requestedSchema": schema}, &out); err != nil {
		return ElicitResult{}, err
	}
	return ElicitResult{Action: out.Action, Content: out.Content}, nil
}

// askClient encodes params, asks, and decodes the result into out.
func askClient(ctx context.Context, method string, params any, out any) error {
	ask, _ := ctx.Value(clientKey).(ClientAsker)
	if ask == nil {
		return errs.New(501, errs.ClientUnsupported, "the calling client cannot be asked "+method+": it did not declare the capability, its protocol (2026-07-28) has no server-to-client requests, or this call did not come from a client").With("method", method)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return errs.Invalid("params", "json", method+" params cannot be encoded: "+err.Error())
	}
	res, err := ask(ctx, method, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return errs.New(502, errs.UpstreamFailed, "the client's answer to "+method+" is not what MCP defines: "+err.Error())
	}
	return nil
}

// hostAsker asks through the host's AskClient service on channel.
func hostAsker(h hostLink, channel uint64) ClientAsker {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		result, fail, err := h.askClient(ctx, seam.Ask{Channel: channel, Method: method, Params: params})
		if err != nil {
			return nil, errs.New(502, errs.Unavailable, "the host did not pass "+method+" on: "+err.Error())
		}
		if fail != nil {
			return nil, fail
		}
		return result, nil
	}
}

// mcpBlock is a content block as MCP writes it.
func mcpBlock(c Content) map[string]any {
	switch c.Type {
	case "image", "audio":
		return map[string]any{"type": c.Type, "data": base64.StdEncoding.EncodeToString(c.Data), "mimeType": c.MIMEType}
	default:
		return map[string]any{"type": "text", "text": c.Text}
	}
}

// blockFromMCP reads a text, image or audio block as MCP writes it.
func blockFromMCP(raw json.RawMessage) (Content, error) {
	var b struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return Content{}, err
	}
	switch b.Type {
	case "text":
		return TextContent(b.Text), nil
	case "image", "audio":
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return Content{}, fmt.Errorf("%s data is not base64: %w", b.Type, err)
		}
		return Content{Type: b.Type, Data: data, MIMEType: b.MIMEType}, nil
	}
	return Content{}, fmt.Errorf("content type %q", b.Type)
}
