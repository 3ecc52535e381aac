package sdk

import "github.com/cairn-mcp/cairn/sdk/errs"

// Error is a typed tool error: code, message, details (naming "field" and
// "constraint" when a field is at fault) and status (400, 404, 409, ...).
// Return one from a handler to send the agent the error envelope.
type Error = errs.Error

// Standard error codes; see package errs for the full list.
const (
	CodeInvalidInput      = errs.InvalidInput
	CodeNotFound          = errs.NotFound
	CodeInvalidTransition = errs.InvalidTransition
	CodeConflict          = errs.Conflict
	CodeInternal          = errs.Internal
)

// InvalidInput returns a 400 ERR_INVALID_INPUT error naming the field and the
// violated constraint.
func InvalidInput(field, constraint, message string) *Error {
	return errs.Invalid(field, constraint, message)
}

// NotFound returns a 404 error with the given code, naming the field that
// held the unknown id.
func NotFound(code, field, message string) *Error {
	return errs.NotFoundf(code, field, "%s", message)
}

// NewError returns an error with an arbitrary status and code.
func NewError(status int, code, message string) *Error {
	return errs.New(status, code, message)
}
