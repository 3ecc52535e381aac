package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Tool declares a tool whose arguments decode into In and whose success
// output is Out (a struct, encoded as the JSON output object).
type Tool[In, Out any] struct {
	// Name is unique across every plugin the host loads; prefix it with
	// your plugin's name. It must match ^[a-zA-Z0-9_-]{1,64}$.
	Name string
	// Title is an optional display name.
	Title string
	// Description tells an agent when and how to use the tool.
	Description string
	// Toolset overrides the plugin's toolset for this tool.
	Toolset string

	// Annotations (MCP tool hints). ReadOnly tools are the only ones listed
	// in READONLY mode.
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool

	// HonoursIdempotency declares that the handler records the call's
	// idempotency key (IdempotencyOf) with its write and answers a repeated
	// key with the first outcome. The host replays an interrupted call only
	// to tools that declare it (or are read-only); others answer a replay
	// with 503 ERR_UNAVAILABLE, retryable.
	HonoursIdempotency bool

	// TaskSupport lets a client run the tool as an MCP task (TaskOptional):
	// for tools that can run for minutes. Empty: plain calls only.
	TaskSupport TaskSupport

	// CallsTools declares that the handler calls other areas' tools
	// (CallTool): the host opens a tool channel only for the calls of
	// tools that declare it, so the others pay nothing for it.
	CallsTools bool

	// Quick, when set and true at the call, declares that this call
	// answers at once and waits on nothing outside the plugin: a point
	// read of a local store, say. On an otherwise idle call lane it then
	// runs where the plugin read it, sparing the hand-off to another
	// goroutine and the thread woken for it (docs/decisions.md D46); the
	// lane reads nothing else until it returns. It is asked at each call,
	// so a tool whose store may be remote answers false there. A tool that
	// CallsTools cannot be Quick.
	Quick func() bool

	// SuccessStatus is reported as _meta.status on success; 200 when zero
	// (use 201 for tools that create something).
	SuccessStatus int

	// InputSchema and OutputSchema override the schemas derived from In and
	// Out.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// OutputFrom derives the output schema from another type than Out,
	// for a handler that answers any: schema.For[T]. Unlike OutputSchema
	// it is derived, so WithDerivedSchemas' table can hold it.
	OutputFrom func() json.RawMessage

	// Handler runs the tool. Return an *Error for a typed failure; any other
	// error becomes a 500 ERR_INTERNAL.
	Handler func(ctx context.Context, in In) (Out, error)
}

// ContentProvider lets an output carry extra MCP content blocks (for
// example a screenshot) after the JSON text block.
type ContentProvider interface {
	ExtraContent() []Content
}

// Content is an MCP content block: an extra block of a tool result, or
// the content of a prompt message. It is the seam's type, the one the
// host receives.
type Content = seam.Content

// TextContent is a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent is an image block; data is the image's bytes.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MIMEType: mimeType}
}

// AudioContent is an audio block; data is the clip's bytes.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MIMEType: mimeType}
}

// EmbeddedResource is a resource's contents carried in the result or
// prompt itself (MCP "resource" block), as text.
func EmbeddedResource(uri, mimeType, text string) Content {
	return Content{Type: "resource", URI: uri, MIMEType: mimeType, Text: text}
}

// EmbeddedBlob is a binary resource's contents carried in the result or
// prompt itself (MCP "resource" block with a blob).
func EmbeddedBlob(uri, mimeType string, blob []byte) Content {
	return Content{Type: "resource", URI: uri, MIMEType: mimeType, Data: blob}
}

// ResourceLink is a content block pointing at a resource the call created
// or changed, which the client may read or subscribe to.
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Type: "resource_link", URI: uri, Text: name, MIMEType: mimeType}
}

// Result is the outcome of one tool call.
type Result struct {
	// Output is the JSON success object; nil on error.
	Output json.RawMessage
	// Err is the typed error; nil on success.
	Err *Error
	// Status is 200/201 on success or the error's status.
	Status int
	// Content holds extra content blocks.
	Content []Content
}

type tool struct {
	info  ToolInfo
	input lazyValidator
	// output checks success outputs against the tool's output schema when
	// outputsChecked (tests, CAIRN_MODE=TEST); compiled on first use too.
	output lazyValidator
	status int
	// quick is Tool.Quick.
	quick func() bool
	// derive derives the tool's schemas afresh (derived_schemas.go).
	derive func() ToolSchemas
	call   func(ctx context.Context, args []byte) (any, error)
}

// toolNameRule is the rule validToolName checks, for its panic.
const toolNameRule = `^[a-zA-Z0-9_-]{1,64}$`

// validToolName reports whether name matches toolNameRule, checked by hand
// as validPluginName is.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AddTool declares a tool on p. It panics on a declaration error (bad name,
// duplicate name), which is a programming error caught the first time the
// plugin starts. Schemas are checked by sdktest.CheckSchemas (and on first use).
func AddTool[In, Out any](p *Plugin, t Tool[In, Out]) {
	if !validToolName(t.Name) {
		panic(fmt.Sprintf("sdk.AddTool: tool name %q must match %s", t.Name, toolNameRule))
	}
	if t.Handler == nil {
		panic(fmt.Sprintf("sdk.AddTool: tool %q has no handler", t.Name))
	}
	if t.Quick != nil && t.CallsTools {
		panic(fmt.Sprintf("sdk.AddTool: tool %q calls tools, so it waits on the host and cannot be Quick", t.Name))
	}
	in, out := t.InputSchema, t.OutputSchema
	deriveOut := t.OutputFrom
	if deriveOut == nil {
		deriveOut = schema.For[Out]
	}
	derive := deriveFunc[In](in, out, deriveOut)
	if in == nil || out == nil {
		// Read from the generated table when there is one (derived_schemas.go).
		pre, ok := p.derived[t.Name]
		if in == nil && ok && pre.Input != "" {
			in = json.RawMessage(pre.Input)
		} else if in == nil {
			in = schema.For[In]()
		}
		if out == nil && ok && pre.Output != "" {
			out = json.RawMessage(pre.Output)
		} else if out == nil {
			out = deriveOut()
		}
	}
	// Schemas are compiled on first use, not here: compiling every tool's
	// schemas was most of a plugin's start-up, and calls from the host
	// arrive validated. sdktest.CheckSchemas compiles them all.
	ts := t.Toolset
	if ts == "" {
		ts = p.toolset
	}
	status := t.SuccessStatus
	if status == 0 {
		status = 200
	}
	handler := t.Handler
	entry := &tool{
		info: ToolInfo{
			Name: t.Name, Title: t.Title, Description: t.Description, Toolset: ts,
			InputSchema: in, OutputSchema: out,
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, Idempotent: t.Idempotent, OpenWorld: t.OpenWorld,
			HonoursIdempotency: t.HonoursIdempotency, TaskSupport: t.TaskSupport, CallsTools: t.CallsTools,
		},
		input:  lazyValidator{tool: t.Name, raw: in},
		output: lazyValidator{tool: t.Name, raw: out},
		status: status,
		quick:  t.Quick,
		derive: derive,
		call: func(ctx context.Context, args []byte) (any, error) {
			var input In
			if len(bytes.TrimSpace(args)) > 0 {
				// Unmarshal, not a Decoder: a Decoder copies the
				// arguments into its own buffer first.
				if err := json.Unmarshal(args, &input); err != nil {
					if e, ok := errs.As(err); ok {
						// A typed refusal from the input's own decoding
						// (UnmarshalJSON) names its field: keep it.
						return nil, e
					}
					return nil, errs.Invalid("", "type", "arguments do not match the tool's input: "+err.Error())
				}
			}
			return handler(ctx, input)
		},
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.tools[t.Name]; dup {
		panic(fmt.Sprintf("sdk.AddTool: tool %q declared twice", t.Name))
	}
	p.tools[t.Name] = entry
	p.toolOrder = append(p.toolOrder, t.Name)
}

// invoke runs a tool exactly as a call from the host does — in-process
// (tests) or for the host — checking its arguments first: the raw-JSON
// rules and the input schema, on every call, whoever sent it
// (docs/decisions.md D34). The host does not validate plugin tools'
// arguments itself, so this is the one check. Then decoding, the handler,
// panic recovery and output encoding. ctx may carry a Caller (WithCaller)
// and a progress sink (WithProgress).
func (p *Plugin) invoke(ctx context.Context, name string, args []byte) Result {
	t, args, e := p.checkedCall(name, args)
	if e != nil {
		return Result{Err: e, Status: e.Status}
	}
	return p.run(ctx, t, args)
}

// checkedCall finds tool name and checks args for it (the empty arguments
// are `{}`).
func (p *Plugin) checkedCall(name string, args []byte) (*tool, []byte, *errs.Error) {
	p.mu.RLock()
	t := p.tools[name]
	p.mu.RUnlock()
	if t == nil {
		return nil, nil, errs.NotFoundf(errs.NotFound, "name", "tool %q is not provided by plugin %s", name, p.name)
	}
	if len(args) == 0 || string(args) == "null" {
		args = []byte(`{}`)
	}
	// Raw checks first: decoding for validation would already have
	// replaced invalid UTF-8 (D11 refuses it) and walked any depth.
	if e := rawjson.Check(args, rawjson.DefaultMaxDepth); e != nil {
		return nil, nil, e
	}
	if e := t.input.validateChecked(args); e != nil {
		return nil, nil, e
	}
	return t, args, nil
}

// run calls checked tool t: the handler, panic recovery, output encoding.
func (p *Plugin) run(ctx context.Context, t *tool, args []byte) Result {
	name := t.info.Name
	if k := IdempotencyOf(ctx); k.Keyed() {
		// The key names this call: a repeat under it with another
		// call is refused (docs/decisions.md D42).
		c := CallerFrom(ctx)
		ctx = WithIdempotency(ctx, k.For(name, args).By(c.Source+":"+c.ID))
	}
	out, err := p.safeCall(ctx, t, args)
	if err != nil {
		e := errs.From(err)
		if e.Code == errs.Internal {
			p.logger.Error("tool failed", "tool", name, "error", err)
		}
		if ctx.Err() != nil && e.Code == errs.Internal {
			e = errs.New(499, errs.Cancelled, "the call was cancelled: "+ctx.Err().Error())
		}
		if e.Status == 0 {
			e.Status = 500
		}
		return Result{Err: e, Status: e.Status}
	}
	raw, err := MarshalJSON(out)
	if err != nil {
		e := errs.New(500, errs.ToolOutputMalformed, fmt.Sprintf("tool %s produced output that cannot be encoded: %v", name, err))
		return Result{Err: e, Status: e.Status}
	}
	if outputsChecked() {
		if e := t.output.validate(raw); e != nil {
			e := errs.New(500, errs.ToolOutputMalformed, fmt.Sprintf("tool %s produced output that breaks its output schema: %s", name, e.Message)).
				With("field", e.Details["field"]).With("constraint", e.Details["constraint"])
			p.logger.Error("tool output breaks its schema", "tool", name, "error", e.Message)
			return Result{Err: e, Status: e.Status}
		}
	}
	res := Result{Output: raw, Status: t.status}
	if cp, ok := out.(ContentProvider); ok {
		res.Content = cp.ExtraContent()
	}
	return res
}

func (p *Plugin) safeCall(ctx context.Context, t *tool, args []byte) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.logger.Error("tool panicked", "tool", t.info.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = errs.New(500, errs.Internal, fmt.Sprintf("tool %s failed unexpectedly; the plugin logged the details", t.info.Name))
		}
	}()
	return t.call(ctx, args)
}

// outputsChecked reports whether success outputs are checked against their
// output schema: in tests (a test binary, for in-process calls) and when
// the host runs in TEST mode, which it passes to its plugins. Elsewhere the
// check is skipped, as it costs a schema walk per call.
var outputsChecked = sync.OnceValue(func() bool {
	return testing.Testing() || os.Getenv("CAIRN_MODE") == "TEST"
})

// lazyValidator compiles a tool's input schema the first time a call needs
// it.
type lazyValidator struct {
	tool string
	raw  json.RawMessage
	once sync.Once
	v    *schema.Validator
	err  error
}

func (l *lazyValidator) compile() error {
	l.once.Do(func() { l.v, l.err = schema.Compile(l.raw) })
	return l.err
}

func (l *lazyValidator) validate(args []byte) *errs.Error {
	if err := l.compile(); err != nil {
		return errs.Newf(500, errs.Internal, "tool %s declares a schema that does not compile: %v", l.tool, err)
	}
	return l.v.Validate(args)
}

// validateChecked is validate for arguments rawjson.Check passed: they are
// not scanned for validity a second time.
func (l *lazyValidator) validateChecked(args []byte) *errs.Error {
	if err := l.compile(); err != nil {
		return errs.Newf(500, errs.Internal, "tool %s declares a schema that does not compile: %v", l.tool, err)
	}
	return l.v.ValidateChecked(args)
}

// checkSchemas compiles the input and output schema of every declared
// tool and reports the first that does not compile. Start-up no longer
// compiles them; a plugin's tests call it (sdktest.CheckSchemas) to catch
// a bad declaration.
func (p *Plugin) checkSchemas() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, name := range p.toolOrder {
		t := p.tools[name]
		if err := t.input.compile(); err != nil {
			return fmt.Errorf("tool %q input schema: %w", name, err)
		}
		if _, err := schema.Compile(t.info.OutputSchema); err != nil {
			return fmt.Errorf("tool %q output schema: %w", name, err)
		}
	}
	return nil
}

// MarshalJSON encodes v without HTML escaping and without a trailing
// newline, the form every cairn tool output uses.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
