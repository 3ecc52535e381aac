package errs_test

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A domain function answers with a typed error; the agent reads its code,
// message and details, the client its status.
func ExampleError() {
	err := errs.Invalid("title", "maxLength", "a title holds at most 200 characters; shorten it")
	fmt.Println(err.Status, err.Code, err.Details["field"], err.Details["constraint"])
	// Output: 400 ERR_INVALID_INPUT title maxLength
}

// The error text names the field, when there is one, for logs.
func ExampleError_Error() {
	fmt.Println(errs.Invalid("labels[3]", "pattern", "a label is lowercase").Error())
	fmt.Println(errs.New(503, errs.Unavailable, "the index is rebuilding; retry in a minute").Error())
	// Output:
	// ERR_INVALID_INPUT: a label is lowercase (field labels[3])
	// ERR_UNAVAILABLE: the index is rebuilding; retry in a minute
}

// With adds a detail without changing the error it was called on, so a
// shared error value can be specialised per call.
func ExampleError_With() {
	base := errs.Conflictf(errs.InvalidTransition, "a done task cannot be started")
	e := base.With("from", "done").With("to", "doing")
	fmt.Println(len(base.Details), e.Details["from"], e.Details["to"])
	// Output: 0 done doing
}

// A failed call's structuredContent is the envelope around the error.
func ExampleEnvelope() {
	env := errs.Envelope{Error: *errs.NotFoundf(errs.TaskNotFound, "id", "no task %q; list tasks to find its id", "t-9")}
	b, _ := json.Marshal(env)
	fmt.Println(string(b))
	// Output: {"error":{"code":"ERR_TASK_NOT_FOUND","message":"no task \"t-9\"; list tasks to find its id","details":{"constraint":"exists","field":"id"}}}
}

func ExampleNew() {
	e := errs.New(429, errs.RateLimited, "too many calls; wait a minute")
	fmt.Println(e.Status, e.Code)
	// Output: 429 ERR_RATE_LIMITED
}

func ExampleNewf() {
	e := errs.Newf(413, errs.LimitExceeded, "the file has %d bytes, more than %d", 9000, 4096)
	fmt.Println(e.Status, e.Message)
	// Output: 413 the file has 9000 bytes, more than 4096
}

func ExampleInvalid() {
	e := errs.Invalid("due", "format", "due is a date such as 2025-01-31")
	fmt.Println(e)
	// Output: ERR_INVALID_INPUT: due is a date such as 2025-01-31 (field due)
}

func ExampleInvalidf() {
	e := errs.Invalidf("priority", "enum", "priority is one of %v", []string{"low", "high"})
	fmt.Println(e)
	// Output: ERR_INVALID_INPUT: priority is one of [low high] (field priority)
}

func ExampleNotFoundf() {
	e := errs.NotFoundf(errs.ProjectNotFound, "project", "no project %q", "apollo")
	fmt.Println(e.Status, e)
	// Output: 404 ERR_PROJECT_NOT_FOUND: no project "apollo" (field project)
}

func ExampleConflictf() {
	e := errs.Conflictf(errs.AlreadyFinalized, "session %s is already finalized", "s-1")
	fmt.Println(e.Status, e)
	// Output: 409 ERR_ALREADY_FINALIZED: session s-1 is already finalized
}

// As finds a typed error inside a wrapped one.
func ExampleAs() {
	err := fmt.Errorf("load task: %w", errs.NotFoundf(errs.TaskNotFound, "id", "no task t-1"))
	if e, ok := errs.As(err); ok {
		fmt.Println(e.Code)
	}
	_, ok := errs.As(io.EOF)
	fmt.Println(ok)
	// Output:
	// ERR_TASK_NOT_FOUND
	// false
}

// From is what a server does with a handler's error: typed errors pass
// through, anything else is an internal error.
func ExampleFrom() {
	fmt.Println(errs.From(errs.Invalid("x", "type", "x is a number")).Status)
	fmt.Println(errs.From(io.ErrUnexpectedEOF))
	fmt.Println(errs.From(nil) == nil)
	// Output:
	// 400
	// ERR_INTERNAL: unexpected EOF
	// true
}
