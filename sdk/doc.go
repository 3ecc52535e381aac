// Package sdk is the public surface for writing cairn plugins.
//
// A plugin is an executable named cairn-plugin-<name> that declares tools
// with Go types and hands control to Serve:
//
//	type In struct {
//		Name string `json:"name" jsonschema:"minLength=1,description=Who to greet"`
//	}
//	type Out struct {
//		Greeting string `json:"greeting"`
//	}
//
//	func main() {
//		p := sdk.New("hello", "1.0.0")
//		sdk.AddTool(p, sdk.Tool[In, Out]{
//			Name:        "hello_greet",
//			Description: "Greets someone.",
//			ReadOnly:    true,
//			Handler: func(ctx context.Context, in In) (Out, error) {
//				return Out{Greeting: "Hello, " + in.Name}, nil
//			},
//		})
//		sdk.Serve(p)
//	}
//
// The SDK derives input and output JSON Schemas from the types, validates
// every call's arguments before the handler runs, turns *Error values into
// the typed error envelope agents see, streams progress and log lines to the
// calling client (ReportProgress, Log), asks that client for a completion or
// its user's input (Sample, Elicit), publishes events on the host's bus, logs
// JSON to stderr through hclog, and exits when its host dies. Everything a plugin writes to stdout before Serve goes to stderr
// instead, because stdout carries the go-plugin handshake.
//
// Stability: the SDK follows semantic versioning with the cairn module; the
// wire protocol underneath is versioned separately (sdk/internal/protocol).
package sdk

// Version is the SDK version reported to the host in Describe.
const Version = "0.1.0"
