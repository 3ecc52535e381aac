// Package testkit is a plugin used by the host's end-to-end tests and
// benchmarks: it exercises every path of the protocol (typed errors,
// progress, cancellation, big results, events, resources, crashes).
package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/sdk"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"minLength=1,maxLength=100,description=Text to echo"`
	Count   int    `json:"count,omitempty" jsonschema:"minimum=0,maximum=10"`
}

type echoOut struct {
	Message string `json:"message"`
	Caller  string `json:"caller"`
	Source  string `json:"source"`
	Session string `json:"session"`
}

type failIn struct {
	Code   string `json:"code"`
	Status int    `json:"status" jsonschema:"minimum=400,maximum=599"`
	Field  string `json:"field,omitempty"`
}

type sleepIn struct {
	Ms     int    `json:"ms" jsonschema:"minimum=0,maximum=600000"`
	Marker string `json:"marker,omitempty" jsonschema:"pattern=^[a-z0-9-]*$"`
	// Log sends an info log line for the caller after each progress step.
	Log bool `json:"log,omitempty"`
}

type sleepOut struct {
	SleptMs int64 `json:"slept_ms"`
}

type bigIn struct {
	Bytes int `json:"bytes" jsonschema:"minimum=0,maximum=67108864"`
}

type bigOut struct {
	Size int    `json:"size"`
	Data string `json:"data"`
}

type pidOut struct {
	PID int `json:"pid"`
}

type publishIn struct {
	Type string         `json:"type" jsonschema:"minLength=1"`
	Data map[string]any `json:"data,omitempty"`
}

type publishOut struct {
	Published bool `json:"published"`
}

type eventsOut struct {
	Events []received `json:"events"`
}

type received struct {
	Type   string          `json:"type"`
	Source string          `json:"source"`
	Data   json.RawMessage `json:"data"`
	// Pattern is the subscription whose handler recorded the event: each
	// handler records each event once, so a repeat means a double delivery.
	Pattern string `json:"pattern"`
}

type exitIn struct {
	Code   int    `json:"code" jsonschema:"minimum=0,maximum=125"`
	Stderr string `json:"stderr,omitempty" jsonschema:"maxLength=200"`
}

type envIn struct {
	Names []string `json:"names" jsonschema:"maxItems=50"`
}

type envOut struct {
	Env map[string]string `json:"env"`
}

type imageOut struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	png    []byte
}

func (o imageOut) ExtraContent() []sdk.Content {
	return []sdk.Content{{Type: "image", Data: o.png, MIMEType: "image/png"}}
}

// A 1×1 transparent PNG.
var onePixel = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82}

// New builds the test plugin; name is the plugin name and tool prefix.
func New(name string) *sdk.Plugin {
	p := sdk.New(name, "1.2.3", sdk.WithDescription("end-to-end test plugin"))
	var dataDir string
	p.AddHooks(sdk.Hooks{Configure: func(_ context.Context, cfg sdk.Config) error {
		dataDir = cfg.DataDir
		if os.Getenv("TESTKIT_FAIL_CONFIGURE") == "1" {
			return sdk.NewError(500, "ERR_INIT_FAILED", "testkit store is locked (simulated)")
		}
		// A plugin may declare a tool from its settings, in its configure
		// hook, after a while: the host must ask for its tools afterwards.
		if cfg.Settings["declare_in_configure"] == "1" {
			time.Sleep(100 * time.Millisecond)
			sdk.AddTool(p, sdk.Tool[echoIn, echoOut]{
				Name: name + "_configured", Description: "Declared by the configure hook.", ReadOnly: true,
				Handler: func(_ context.Context, in echoIn) (echoOut, error) { return echoOut{Message: in.Message}, nil },
			})
		}
		return nil
	}})
	// TESTKIT_OPEN_GATE holds the plugin's open work until the file it
	// names exists (its health says "opening" meanwhile);
	// TESTKIT_OPEN_FAIL makes that work fail once the gate is open.
	if gate := os.Getenv("TESTKIT_OPEN_GATE"); gate != "" {
		p.AddHooks(sdk.Hooks{Open: func(ctx context.Context, _ sdk.Config, report func(string)) error {
			report("waiting for " + filepath.Base(gate))
			for {
				if _, err := os.Stat(gate); err == nil {
					break
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
			if os.Getenv("TESTKIT_OPEN_FAIL") == "1" {
				return errors.New("testkit index is unreadable (simulated)")
			}
			return nil
		}})
	}
	var mu sync.Mutex
	var got []received
	patterns := []string{"demo.*"}
	if extra := os.Getenv("TESTKIT_SUBSCRIBE"); extra != "" {
		patterns = append(patterns, strings.Split(extra, ",")...)
	}
	for _, pat := range patterns {
		p.OnEvent(pat, func(_ context.Context, ev sdk.Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, received{Type: ev.Type, Source: ev.Source, Data: ev.Data, Pattern: pat})
			return nil
		})
	}
	sdk.AddTool(p, sdk.Tool[exitIn, struct{}]{
		Name: name + "_exit", Description: "Crashes the plugin process: writes a line to stderr and exits with the code.",
		Handler: func(_ context.Context, in exitIn) (struct{}, error) {
			if in.Stderr != "" {
				// Straight to fd 2, as the Go runtime writes a fatal
				// panic: go-plugin's Serve has swapped os.Stderr for a
				// stream that a dying process may never flush.
				fmt.Fprintln(os.NewFile(2, "stderr"), in.Stderr)
			}
			os.Exit(in.Code)
			return struct{}{}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[envIn, envOut]{
		Name: name + "_env", Description: "Reports which of the named environment variables the plugin process has, with their values.", ReadOnly: true,
		Handler: func(_ context.Context, in envIn) (envOut, error) {
			out := envOut{Env: map[string]string{}}
			for _, n := range in.Names {
				if v, ok := os.LookupEnv(n); ok {
					out.Env[n] = v
				}
			}
			return out, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[echoIn, echoOut]{
		Name: name + "_echo", Description: "Echoes a message with the caller identity.", ReadOnly: true, Idempotent: true,
		Handler: func(ctx context.Context, in echoIn) (echoOut, error) {
			c := sdk.CallerFrom(ctx)
			msg := in.Message
			if in.Count > 1 {
				msg = strings.Repeat(msg, in.Count)
			}
			return echoOut{Message: msg, Caller: c.ID, Source: c.Source, Session: c.ClientSessionID}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[failIn, struct{}]{
		Name: name + "_fail", Description: "Fails with the given typed error.", ReadOnly: true,
		Handler: func(ctx context.Context, in failIn) (struct{}, error) {
			e := sdk.NewError(in.Status, in.Code, "failing on purpose")
			if in.Field != "" {
				e = sdk.InvalidInput(in.Field, "testkit", "failing on purpose")
				e.Status, e.Code = in.Status, in.Code
			}
			return struct{}{}, e
		},
	})
	sdk.AddTool(p, sdk.Tool[sleepIn, sleepOut]{
		Name: name + "_sleep", Description: "Sleeps, reporting progress; notes a cancellation in the data dir.", SuccessStatus: 201,
		Handler: func(ctx context.Context, in sleepIn) (sleepOut, error) {
			if in.Marker != "" {
				// Lets a test cancel the call once it runs, not after a guess.
				_ = os.WriteFile(filepath.Join(dataDir, "started-"+in.Marker), nil, 0o644)
			}
			start := time.Now()
			total := time.Duration(in.Ms) * time.Millisecond
			step := total / 10
			if step <= 0 {
				step = time.Millisecond
			}
			for i := 1; time.Since(start) < total; i++ {
				select {
				case <-ctx.Done():
					if in.Marker != "" {
						_ = os.WriteFile(filepath.Join(dataDir, "cancelled-"+in.Marker), []byte(ctx.Err().Error()), 0o644)
					}
					return sleepOut{}, ctx.Err()
				case <-time.After(step):
					sdk.ReportProgress(ctx, float64(i), 10, fmt.Sprintf("step %d", i))
					if in.Log {
						sdk.Log(ctx, sdk.LogInfo, fmt.Sprintf("step %d", i), nil)
					}
				}
			}
			return sleepOut{SleptMs: time.Since(start).Milliseconds()}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[bigIn, bigOut]{
		Name: name + "_big", Description: "Returns a result of the given size.", ReadOnly: true,
		Handler: func(_ context.Context, in bigIn) (bigOut, error) {
			return bigOut{Size: in.Bytes, Data: strings.Repeat("x", in.Bytes)}, nil
		},
	})
	if kw := os.Getenv("TESTKIT_SCHEMA_KEYWORD"); kw != "" {
		// A tool whose input schema uses a keyword of the caller's
		// choosing, for the host's registration-time check.
		sdk.AddTool(p, sdk.Tool[struct{}, struct{}]{
			Name: name + "_odd_schema", Description: "Declares an input schema with TESTKIT_SCHEMA_KEYWORD in it.",
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"tags":{"type":"array",%q:{"type":"string"}}}}`, kw)),
			Handler:     func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil },
		})
	}
	sdk.AddTool(p, sdk.Tool[struct{}, pidOut]{
		Name: name + "_pid", Description: "Returns the plugin's process id.", ReadOnly: true,
		Handler: func(context.Context, struct{}) (pidOut, error) { return pidOut{PID: os.Getpid()}, nil },
	})
	sdk.AddTool(p, sdk.Tool[struct{}, struct{}]{
		Name: name + "_panic", Description: "Panics inside the handler.",
		Handler: func(context.Context, struct{}) (struct{}, error) { panic("testkit panic") },
	})
	sdk.AddTool(p, sdk.Tool[publishIn, publishOut]{
		Name: name + "_publish", Description: "Publishes an event on the host bus.",
		Handler: func(ctx context.Context, in publishIn) (publishOut, error) {
			if err := p.Publish(ctx, in.Type, in.Data); err != nil {
				return publishOut{}, err
			}
			return publishOut{Published: true}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[struct{}, eventsOut]{
		Name: name + "_events", Description: "Lists the demo.* events received.", ReadOnly: true,
		Handler: func(context.Context, struct{}) (eventsOut, error) {
			mu.Lock()
			defer mu.Unlock()
			return eventsOut{Events: append([]received{}, got...)}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[struct{}, imageOut]{
		Name: name + "_image", Description: "Returns a 1x1 PNG as image content.", ReadOnly: true,
		Handler: func(context.Context, struct{}) (imageOut, error) {
			return imageOut{Width: 1, Height: 1, png: onePixel}, nil
		},
	})
	p.AddResources(sdk.ResourceSet{
		Fixed:     []sdk.Resource{{URI: name + "://readme", Name: "readme", Description: "About the test kit", MIMEType: "text/markdown"}},
		Templates: []sdk.ResourceTemplate{{URITemplate: name + "://notes/{id}", Name: "note", Description: "A note by id", MIMEType: "text/plain"}},
		Prefix:    name + "://", Read: func(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
			switch {
			case uri == name+"://readme":
				return []sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: "# testkit\n"}}, nil
			case strings.HasPrefix(uri, name+"://notes/"):
				id := strings.TrimPrefix(uri, name+"://notes/")
				if id == "missing" {
					return nil, sdk.NotFound("ERR_RESOURCE_NOT_FOUND", "uri", "no note "+id)
				}
				return []sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "note " + id}}, nil
			}
			return nil, sdk.NotFound("ERR_RESOURCE_NOT_FOUND", "uri", "unknown resource")
		},
	})
	// TESTKIT_PROMPTS=1 adds a prompt with a completable argument, for
	// tests that run every kind of call; off by default so prompt
	// listings elsewhere stay as they are.
	if os.Getenv("TESTKIT_PROMPTS") == "1" {
		p.AddPrompt(sdk.Prompt{
			Name: name + "_greet", Description: "Greets someone by name.",
			Arguments: []sdk.PromptArgument{{Name: "who", Required: true}},
			Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
				if args["who"] == "" {
					return sdk.PromptResult{}, sdk.NewError(400, "ERR_VALIDATION", "who is required")
				}
				return sdk.PromptResult{Description: "a greeting", Messages: []sdk.PromptMessage{{Role: "user", Text: "hello " + args["who"]}}}, nil
			},
		})
		p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
			if req.Ref.Name != name+"_greet" || req.Argument != "who" {
				return nil, false, nil
			}
			return sdk.MatchPrefix([]string{"ada", "alan", "grace"}, req.Value), true, nil
		})
	}
	p.AddHooks(sdk.Hooks{Health: func(context.Context) sdk.Health {
		if os.Getenv("TESTKIT_DEGRADED") == "1" {
			return sdk.Health{Status: "degraded", Message: "simulated", Details: map[string]any{"problems": []string{"simulated problem"}}}
		}
		return sdk.Health{Status: "ok"}
	}})
	sdk.AddTool(p, sdk.Tool[struct{}, configOut]{
		Name: name + "_config", Description: "Returns the configuration the host sent.", ReadOnly: true,
		Handler: func(context.Context, struct{}) (configOut, error) {
			c := p.Config()
			settings := c.Settings
			if settings == nil {
				settings = map[string]string{} // an object, as the schema says, never null
			}
			return configOut{Root: c.Root, DataDir: c.DataDir, Mode: c.Mode, Settings: settings}, nil
		},
	})
	return p
}

type configOut struct {
	Root     string            `json:"root"`
	DataDir  string            `json:"data_dir"`
	Mode     string            `json:"mode"`
	Settings map[string]string `json:"settings"`
}
