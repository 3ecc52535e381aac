// Package errs defines the typed tool error shared by the SDK, the host and
// the domain packages of every area.
//
// It has no dependencies beyond the standard library so that domain packages
// can return typed errors without knowing anything of MCP or gRPC. A tool
// error travels to the agent as the envelope
// {"error":{"code","message","details"}} with the HTTP-like Status in the
// result's _meta.status.
package errs

import (
	"errors"
	"fmt"
)

// Error codes of the specification (part 7). Plugins may define their own
// codes; these are the ones every cairn component understands.
const (
	InvalidInput        = "ERR_INVALID_INPUT"
	NotFound            = "ERR_NOT_FOUND"
	InvalidTransition   = "ERR_INVALID_TRANSITION"
	CircularDependency  = "ERR_CIRCULAR_DEPENDENCY"
	ProjectNotFound     = "ERR_PROJECT_NOT_FOUND"
	TaskNotFound        = "ERR_TASK_NOT_FOUND"
	SessionNotFound     = "ERR_SESSION_NOT_FOUND"
	SkillNotFound       = "ERR_SKILL_NOT_FOUND"
	AgentNotFound       = "ERR_AGENT_NOT_FOUND"
	AlreadyFinalized    = "ERR_ALREADY_FINALIZED"
	InvalidMode         = "ERR_INVALID_MODE"
	ConfigInvalid       = "ERR_CONFIG_INVALID"
	InitFailed          = "ERR_INIT_FAILED"
	Conflict            = "ERR_CONFLICT"
	Internal            = "ERR_INTERNAL"
	Unavailable         = "ERR_UNAVAILABLE"
	Cancelled           = "ERR_CANCELLED"
	RateLimited         = "ERR_RATE_LIMITED"
	Unauthorized        = "ERR_UNAUTHORIZED"
	Forbidden           = "ERR_FORBIDDEN"
	NotConfigured       = "ERR_NOT_CONFIGURED"
	LimitExceeded       = "ERR_LIMIT_EXCEEDED"
	UnsupportedMedia    = "ERR_UNSUPPORTED_MEDIA"
	UpstreamFailed      = "ERR_UPSTREAM_FAILED"
	ResourceNotFound    = "ERR_RESOURCE_NOT_FOUND"
	PluginUnavailable   = "ERR_PLUGIN_UNAVAILABLE"
	ToolOutputMalformed = "ERR_TOOL_OUTPUT_MALFORMED"
	// ClientUnsupported: the calling MCP client cannot do what a tool asked
	// of it (sampling, elicitation): it did not declare the capability, or
	// its protocol or transport has no server-to-client requests.
	ClientUnsupported = "ERR_CLIENT_UNSUPPORTED"
	// ApprovalRequired (status 428): the move waits for a person's
	// approval; Details["approve"] names the internal tool and arguments
	// that record the decision, Details["where"] where a person gives it
	// (docs/decisions.md D45).
	ApprovalRequired = "ERR_APPROVAL_REQUIRED"
)

// Error is a typed tool error: a stable code, a human-readable message that
// says what to do, details naming the offending field and the violated
// constraint, and the status reported in _meta.status (400, 404, 409, ...).
type Error struct {
	Code    string         `json:"code" jsonschema:"minLength=1"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Status  int            `json:"-"`
}

// Envelope is the structuredContent of a failed call, {"error":{"code",
// "message","details"}} (docs/decisions.md D3). Its JSON Schema, derived
// from this type, is the error half of every tool's published output
// schema (docs/decisions.md D37).
type Envelope struct {
	Error Error `json:"error"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if f, ok := e.Details["field"].(string); ok && f != "" {
		return fmt.Sprintf("%s: %s (field %s)", e.Code, e.Message, f)
	}
	return e.Code + ": " + e.Message
}

// With returns a copy of e with one more detail set.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// New builds an error with the given status, code and message.
func New(status int, code, message string) *Error {
	return &Error{Code: code, Message: message, Details: map[string]any{}, Status: status}
}

// Newf is New with a format string.
func Newf(status int, code, format string, args ...any) *Error {
	return New(status, code, fmt.Sprintf(format, args...))
}

// Invalid reports bad input: status 400, ERR_INVALID_INPUT, naming the field
// (a JSON path such as "labels[3]") and the violated constraint (a JSON
// Schema keyword such as "maxLength", or a rule name such as "transition").
func Invalid(field, constraint, message string) *Error {
	return &Error{
		Code:    InvalidInput,
		Message: message,
		Details: map[string]any{"field": field, "constraint": constraint},
		Status:  400,
	}
}

// Invalidf is Invalid with a format string.
func Invalidf(field, constraint, format string, args ...any) *Error {
	return Invalid(field, constraint, fmt.Sprintf(format, args...))
}

// NotFoundf reports a missing resource: status 404 with the given code (for
// example TaskNotFound), naming the field that held the unknown id.
func NotFoundf(code, field, format string, args ...any) *Error {
	e := Newf(404, code, format, args...)
	if field != "" {
		e.Details["field"] = field
		e.Details["constraint"] = "exists"
	}
	return e
}

// Conflictf reports a state conflict: status 409 with the given code.
func Conflictf(code, format string, args ...any) *Error {
	return Newf(409, code, format, args...)
}

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// From converts any error into an *Error: typed errors pass through, anything
// else becomes a 500 ERR_INTERNAL carrying the error text.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := As(err); ok {
		return e
	}
	return New(500, Internal, err.Error())
}
