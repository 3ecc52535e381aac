package hostconn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// servePluginEnv, set to "1", makes this test binary the notes plugin:
// the examples start it as a host starts any plugin executable, so they
// run against a real plugin process over the real protocol.
const servePluginEnv = "HOSTCONN_EXAMPLE_SERVE_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(servePluginEnv) == "1" {
		sdk.Serve(notesPlugin())
		return
	}
	os.Exit(m.Run())
}

type noteIn struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

type noteOut struct {
	ID string `json:"id"`
}

type linkOut struct {
	Task  string `json:"task"`
	Title string `json:"title"`
}

// notesPlugin is the plugin the examples talk to: a tool that reports
// progress and logs, one that may run as a task, an event handler, a
// prompt with a completer, resources and a health report.
func notesPlugin() *sdk.Plugin {
	p := sdk.New("notes", "1.0.0", sdk.WithDescription("Keeps notes"))
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "note_add", Title: "Add a note", Description: "Adds a note.",
		Handler: func(ctx context.Context, in noteIn) (noteOut, error) {
			sdk.ReportProgress(ctx, 1, 1, "stored")
			sdk.Log(ctx, "info", "note added", map[string]any{"length": len(in.Text)})
			return noteOut{ID: "N-1"}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "note_index", Title: "Index notes", Description: "Indexes the notes.",
		TaskSupport: sdk.TaskOptional,
		Handler: func(context.Context, noteIn) (noteOut, error) {
			return noteOut{ID: "index"}, nil
		},
	})
	sdk.AddTool(p, sdk.Tool[noteIn, linkOut]{
		Name: "note_link", Title: "Link a note to a task", Description: "Links a note to a task another area keeps.",
		CallsTools: true,
		Handler: func(ctx context.Context, in noteIn) (linkOut, error) {
			var task struct {
				Title string `json:"title"`
			}
			k := sdk.IdempotencyOf(ctx)
			k.Key += "/link"
			if err := sdk.CallTool(sdk.WithIdempotency(ctx, k), "task_get", map[string]string{"task_id": in.Text}, &task); err != nil {
				return linkOut{}, err
			}
			return linkOut{Task: in.Text, Title: task.Title}, nil
		},
	})
	p.OnEvent("task.*", func(_ context.Context, ev sdk.Event) error {
		if ev.Type == "task.deleted" {
			return errs.Conflictf(errs.Conflict, "a note still links task %s", ev.ID)
		}
		return nil
	})
	p.AddPrompt(sdk.Prompt{
		Name: "review", Title: "Review a note", Description: "Asks for a review of a note.",
		Arguments: []sdk.PromptArgument{{Name: "id", Description: "The note to review", Required: true}},
		Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
			return sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: "user", Text: "Review note " + args["id"] + "."}}}, nil
		},
	})
	p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		if req.Argument != "id" {
			return nil, false, nil
		}
		return sdk.MatchPrefix([]string{"N-1", "N-2", "M-1"}, req.Value), true, nil
	})
	p.AddResources(sdk.ResourceSet{
		Prefix: "notes://",
		Fixed:  []sdk.Resource{{URI: "notes://N-1", Name: "N-1", MIMEType: "text/markdown"}},
		Read: func(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
			if uri != "notes://N-1" {
				return nil, sdk.NotFound(errs.ResourceNotFound, "uri", "no note "+strings.TrimPrefix(uri, "notes://"))
			}
			return []sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: "# Buy milk"}}, nil
		},
	})
	p.AddHooks(sdk.Hooks{Health: func(context.Context) sdk.Health {
		return sdk.Health{Status: "ok", Message: "12 notes"}
	}})
	return p
}

// quietHost is a Host that serves nothing a plugin asks of it.
type quietHost struct{}

func (quietHost) AskClient(context.Context, seam.Ask) (json.RawMessage, *errs.Error) {
	return nil, errs.New(501, errs.ClientUnsupported, "no client here")
}
func (quietHost) CallAreaTool(context.Context, seam.ToolCallback) seam.Result {
	e := errs.New(501, errs.Unavailable, "no areas here")
	return seam.Result{Err: e, Status: e.Status}
}
func (quietHost) Publish(seam.Event) (string, error) { return "", nil }
func (quietHost) PublishStreamed(seam.Event) (func(context.Context) error, string, error) {
	return nil, "", nil
}

// plugged is a started notes plugin: its connection, and how to end it.
type plugged struct {
	conn *hostconn.Conn
	conf hostconn.Configured
	end  func()
}

// startNotes starts the notes plugin as the host starts a plugin
// executable, opens its connection and configures it.
func startNotes(host hostconn.Host) (*plugged, error) {
	dir, err := os.MkdirTemp("", "hostconn-example")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), servePluginEnv+"=1")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostconn.Handshake,
		VersionedPlugins: hostconn.Plugins(host, hclog.NewNullLogger()),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  hostconn.DialOptions(),
		Cmd:              cmd,
		Logger:           hclog.NewNullLogger(),
	})
	end := func() { client.Kill(); _ = os.RemoveAll(dir) }
	rpc, err := client.Client()
	if err != nil {
		end()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	conn, err := hostconn.Open(rpc, "notes")
	if err != nil {
		end()
		return nil, err
	}
	conf, err := conn.Configure(context.Background(), hostconn.Config{Root: dir, DataDir: dir, Mode: "FULL", HostVersion: "example"})
	if err != nil {
		end()
		return nil, err
	}
	return &plugged{conn: conn, conf: conf, end: func() {
		_ = conn.Stop(context.Background())
		end()
	}}, nil
}
