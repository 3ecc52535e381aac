package seam

import "github.com/cairn-mcp/cairn/sdk/errs"

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// Prompt is one of a plugin's MCP prompts.
type Prompt struct {
	Name, Title, Description string
	Arguments                []PromptArgument
}

// PromptMessage is one message of a rendered prompt: its text, or, when
// Content is set, that content block instead.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role    string
	Text    string
	Content *Content
}

// PromptResult is a rendered prompt, or Err when the plugin could not
// render it (an unknown prompt: 404; a missing or invalid argument: 400).
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	Err         *errs.Error
}
