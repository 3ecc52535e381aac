package sdk_test

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"minLength=1,description=Who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// A plugin is built with New, given tools with AddTool and handed to
// Serve in main; its tests drive it in process with package sdktest.
func ExampleNew() {
	p := sdk.New("hello", "1.0.0", sdk.WithDescription("Greets people"))
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name:        "hello_greet",
		Description: "Greets someone.",
		ReadOnly:    true,
		Handler: func(_ context.Context, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name}, nil
		},
	})
	res := sdktest.Invoke(context.Background(), p, "hello_greet", []byte(`{"name":"Ada"}`))
	fmt.Println(res.Status, string(res.Output))
	// Output: 200 {"greeting":"Hello, Ada"}
}

// Plugin collects what the plugin serves; the host learns its tools when
// it starts the plugin.
func ExamplePlugin() {
	p := sdk.New("hello", "1.0.0")
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name: "hello_greet", Description: "Greets someone.", ReadOnly: true,
		Handler: func(_ context.Context, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name}, nil
		},
	})
	for _, t := range sdktest.Tools(p) {
		fmt.Println(t.Name, t.Toolset, t.ReadOnly)
	}
	// Output: hello_greet hello true
}

// Serve is the whole of a plugin's main: it runs the plugin until its
// host stops it. Started by hand, the executable says how to install it.
func ExampleServe() {
	p := sdk.New("hello", "1.0.0")
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name: "hello_greet", Description: "Greets someone.",
		Handler: func(_ context.Context, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name}, nil
		},
	})
	sdk.Serve(p)
}

// An Option configures the plugin New builds.
func ExampleOption() {
	opts := []sdk.Option{sdk.WithDescription("Greets people")}
	if os.Getenv("HELLO_EXPERIMENTAL") == "1" {
		opts = append(opts, sdk.WithToolset("hello-experimental"))
	}
	p := sdk.New("hello", "1.0.0", opts...)
	fmt.Println(len(sdktest.Tools(p)))
	// Output: 0
}

// The description is the one line `cairn plugins` shows for the plugin.
func ExampleWithDescription() {
	p := sdk.New("hello", "1.0.0", sdk.WithDescription("Greets people"))
	_ = p
}

// Tools that name no toolset join the plugin's; a session enables and
// disables tools by toolset.
func ExampleWithToolset() {
	p := sdk.New("hello", "1.0.0", sdk.WithToolset("greetings"))
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name: "hello_greet", Description: "Greets someone.",
		Handler: func(_ context.Context, in greetIn) (greetOut, error) { return greetOut{}, nil },
	})
	sdk.AddTool(p, sdk.Tool[greetIn, greetOut]{
		Name: "hello_wave", Description: "Waves at someone.", Toolset: "gestures",
		Handler: func(_ context.Context, in greetIn) (greetOut, error) { return greetOut{}, nil },
	})
	for _, t := range sdktest.Tools(p) {
		fmt.Println(t.Name, t.Toolset)
	}
	// Output:
	// hello_greet greetings
	// hello_wave gestures
}

// WithLogger replaces the JSON lines on stderr, here with plain lines on
// stdout.
func ExampleWithLogger() {
	log := hclog.New(&hclog.LoggerOptions{Name: "hello", Output: os.Stdout, DisableTime: true})
	p := sdk.New("hello", "1.0.0", sdk.WithLogger(log))
	p.Logger().Info("ready")
	// Output: [INFO]  hello: ready
}

// Logger writes to the operator's log: the host re-logs the plugin's
// stderr under its name.
func ExamplePlugin_Logger() {
	p := sdk.New("hello", "1.0.0")
	p.AddHooks(sdk.Hooks{Configure: func(_ context.Context, cfg sdk.Config) error {
		p.Logger().Info("configured", "data_dir", cfg.DataDir)
		return nil
	}})
}

// Config is what the host sent; it is zero before the host configured the
// plugin.
func ExamplePlugin_Config() {
	p := sdk.New("hello", "1.0.0")
	fmt.Printf("%q\n", p.Config().Mode)
	_ = sdktest.Configure(context.Background(), p, sdk.Config{Mode: "READONLY"})
	fmt.Printf("%q\n", p.Config().Mode)
	// Output:
	// ""
	// "READONLY"
}

// Config carries the workspace, the plugin's data directory and its
// settings from the host's config file.
func ExampleConfig() {
	p := sdk.New("hello", "1.0.0")
	p.AddHooks(sdk.Hooks{Configure: func(_ context.Context, cfg sdk.Config) error {
		fmt.Println(cfg.Mode, cfg.Settings["greeting"])
		return nil
	}})
	_ = sdktest.Configure(context.Background(), p, sdk.Config{Mode: "FULL", Settings: map[string]string{"greeting": "Hi"}})
	// Output: FULL Hi
}

// store stands for what a plugin opens at start and closes at stop.
type store struct{ open bool }

// AddHooks ties the plugin's stores to its lifecycle: open them when the
// host configures the plugin, close them when it stops, report on them in
// the plugin's health.
func ExamplePlugin_AddHooks() {
	p := sdk.New("hello", "1.0.0")
	var st *store
	p.AddHooks(sdk.Hooks{
		Configure: func(context.Context, sdk.Config) error {
			st = &store{open: true}
			return nil
		},
		Stop: func(context.Context) error {
			st.open = false
			fmt.Println("store closed")
			return nil
		},
		Health: func(context.Context) sdk.Health {
			if !st.open {
				return sdk.Health{Status: "degraded", Message: "the store is closed"}
			}
			return sdk.Health{Status: "ok"}
		},
	})
	ctx := context.Background()
	_ = sdktest.Configure(ctx, p, sdk.Config{})
	fmt.Println(sdktest.Health(ctx, p).Status)
	_ = sdktest.Stop(ctx, p)
	// Output:
	// ok
	// store closed
}

// Open holds start-up work that may outlast the host's start: the host
// answers the plugin's calls once it is done, and shows the step it
// reports meanwhile.
func ExampleHooks() {
	p := sdk.New("hello", "1.0.0")
	p.AddHooks(sdk.Hooks{
		Configure: func(context.Context, sdk.Config) error {
			fmt.Println("store opened")
			return nil
		},
		Open: func(_ context.Context, _ sdk.Config, report func(step string)) error {
			report("rebuilding the index")
			fmt.Println("index rebuilt")
			return nil
		},
	})
	_ = sdktest.Configure(context.Background(), p, sdk.Config{})
	// Output:
	// store opened
	// index rebuilt
}

// Health details join server_health; a status other than "ok" shows the
// plugin as degraded in `cairn status`.
func ExampleHealth() {
	p := sdk.New("hello", "1.0.0")
	p.AddHooks(sdk.Hooks{Health: func(context.Context) sdk.Health {
		return sdk.Health{Status: "degraded", Message: "the index is stale", Details: map[string]any{"index": map[string]any{"stale": true}}}
	}})
	h := sdktest.Health(context.Background(), p)
	fmt.Println(h.Status, h.Message, h.Details["index"])
	// Output: degraded the index is stale map[stale:true]
}

// MarshalJSON is how every cairn tool output is encoded: no HTML escaping,
// no trailing newline.
func ExampleMarshalJSON() {
	raw, _ := sdk.MarshalJSON(map[string]string{"query": "a<b & c>d"})
	fmt.Println(string(raw))
	// Output: {"query":"a<b & c>d"}
}
