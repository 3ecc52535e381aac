// Package plugin names, for the host, what crosses the plugin boundary
// besides tool calls (those are host/pipeline's Call and Outcome, and a
// described tool is a host/registry Tool): prompts, completions,
// resources, health, a plugin's description and its requests to ask a
// client. Each is the seam's type (sdk/seam), the one the plugins' side
// uses too, so a type crosses the boundary written once
// (docs/decisions.md D34).
package plugin

import "github.com/cairn-mcp/cairn/sdk/seam"

// Description is what a plugin says about itself at start-up, less its
// tools (the supervisor hands those over as registry tools).
type Description = seam.Description

// PromptArgument is one argument of a prompt.
type PromptArgument = seam.PromptArgument

// Prompt is one of a plugin's MCP prompts.
type Prompt = seam.Prompt

// PromptMessage is one message of a rendered prompt.
type PromptMessage = seam.PromptMessage

// PromptResult is a rendered prompt, or Err when the plugin could not
// render it.
type PromptResult = seam.PromptResult

// CompleteRequest asks a plugin to complete an argument of one of its
// prompts or resource templates (MCP completion/complete).
type CompleteRequest = seam.CompleteRequest

// Completion is a plugin's answer to a CompleteRequest.
type Completion = seam.Completion

// Resource is one of a plugin's MCP resources.
type Resource = seam.Resource

// ResourceTemplate is one of a plugin's MCP resource templates.
type ResourceTemplate = seam.ResourceTemplate

// Resources is a plugin's resource listing.
type Resources = seam.Resources

// ResourceContents is one part of a read resource.
type ResourceContents = seam.ResourceContents

// ReadResult is a read resource, or Err when the plugin could not read it.
type ReadResult = seam.ReadResult

// Health is a plugin's own view of its health.
type Health = seam.Health

// Ask is a plugin's request to the MCP client of one of its running calls.
type Ask = seam.Ask

// TaskRequest is an operation on a plugin's task (docs/decisions.md D39).
type TaskRequest = seam.TaskRequest

// TaskResponse is a plugin's answer to a TaskRequest.
type TaskResponse = seam.TaskResponse
