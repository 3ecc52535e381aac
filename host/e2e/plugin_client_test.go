package e2e

import (
	"context"
	"os/exec"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// everythingFixture builds examples/cairn-plugin-everything and returns
// its path.
func everythingFixture(t *testing.T) string {
	t.Helper()
	return buildFixture(t, "cairn-plugin-everything", "github.com/cairn-mcp/cairn/examples/cairn-plugin-everything")
}

// everythingWorkspace is a workspace with the fixture plugin trusted and
// its toolset visible.
func everythingWorkspace(t *testing.T) *workspace {
	t.Helper()
	fixture := everythingFixture(t)
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, fixture)
	w.env = append(w.env, trustEnv, "CAIRN_TOOLSETS=all")
	w.addPlugin("everything", fixture)
	return w
}

// everythingClients connects one client per transport and era to a
// workspace with the fixture plugin: stdio on its own host and through the
// relay, and HTTP, each on 2025-11-25 and 2026-07-28.
func everythingClients(t *testing.T, each func(t *testing.T, ec *eraClient)) {
	for _, modern := range []bool{false, true} {
		era := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		for _, tr := range []string{"no daemon", "relay", "http"} {
			t.Run(era+" "+tr, func(t *testing.T) {
				w := everythingWorkspace(t)
				var ec *eraClient
				switch tr {
				case "no daemon":
					ec = stdioEraClient(t, w, modern)
				case "relay":
					ec = stdioEraClient(t, w, modern, sharedEnv...)
				default:
					// No GET stream: what the call says must come on the
					// call's own stream.
					url, _ := startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
					ht, err := transport.NewStreamableHTTP(url)
					if err != nil {
						t.Fatal(err)
					}
					ec = &eraClient{t: t, name: "era-http-client", modern: modern, stderr: &syncBuffer{}}
					ec.connect(client.NewClient(ht, eraOptions(modern)...))
				}
				each(t, ec)
			})
		}
	}
}

// pluginLines are the notifications/message lines the fixture plugin sent.
func (ec *eraClient) pluginLines() []mcp.JSONRPCNotification {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range ec.notes {
		if n.Method == string(mcp.MethodNotificationMessage) && n.Params.AdditionalFields["logger"] == "everything" {
			out = append(out, n)
		}
	}
	return out
}

// A plugin's sdk.Log lines reach the client that made the call, before the
// result, at the level it asked for (logging/setLevel on 2025-11-25, the
// request's _meta on 2026-07-28), and not when it asked for less.
func TestPluginLogLinesReachTheCaller(t *testing.T) {
	everythingClients(t, func(t *testing.T, ec *eraClient) {
		setLevel := func(l mcp.LoggingLevel) {
			//lint:ignore SA1019 logging is part of both eras under test
			if err := ec.c.SetLevel(t.Context(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: l}}); err != nil {
				t.Fatal(err)
			}
		}
		setLevel(mcp.LoggingLevelError)
		ec.call("test_tool_with_logging", map[string]any{})
		if got := ec.pluginLines(); len(got) != 0 {
			t.Fatalf("at level error the client heard the plugin's info lines: %v", got)
		}

		setLevel(mcp.LoggingLevelInfo)
		ec.call("test_tool_with_logging", map[string]any{})
		// The lines travel before the result on the same stream, so they
		// are here when the call returns.
		got := ec.pluginLines()
		if len(got) != 3 {
			t.Fatalf("heard %d plugin log lines before the result, want 3: %v", len(got), got)
		}
		for i, want := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			p := got[i].Params.AdditionalFields
			data, _ := p["data"].(map[string]any)
			if p["level"] != "info" || data["message"] != want || data["tool"] != "test_tool_with_logging" {
				t.Fatalf("line %d = %v; want level info, message %q and the tool's field", i, p, want)
			}
		}
	})
}

// Every kind of content block a plugin gives (image, embedded text
// resource, in a tool result and in prompt messages) reaches the client as
// MCP content.
func TestPluginContentReachesTheClient(t *testing.T) {
	everythingClients(t, func(t *testing.T, ec *eraClient) {
		_, res := ec.call("test_multiple_content_types", map[string]any{})
		if len(res.Content) != 3 {
			t.Fatalf("content = %#v; want the JSON text, an image and an embedded resource", res.Content)
		}
		if img, ok := res.Content[1].(mcp.ImageContent); !ok || img.MIMEType != "image/png" || img.Data == "" {
			t.Fatalf("second block = %#v; want the PNG image", res.Content[1])
		}
		er, ok := res.Content[2].(mcp.EmbeddedResource)
		if !ok {
			t.Fatalf("third block = %#v; want an embedded resource", res.Content[2])
		}
		if tr, ok := er.Resource.(mcp.TextResourceContents); !ok || tr.URI != "test://mixed-content-resource" || tr.MIMEType != "application/json" || tr.Text != `{"test":"data","value":123}` {
			t.Fatalf("embedded resource = %#v", er.Resource)
		}

		req := mcp.GetPromptRequest{}
		req.Params.Name, req.Params.Arguments = "test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://given"}
		pr, err := ec.c.GetPrompt(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(pr.Messages) != 2 {
			t.Fatalf("messages = %#v", pr.Messages)
		}
		if er, ok := pr.Messages[0].Content.(mcp.EmbeddedResource); !ok || er.Resource.(mcp.TextResourceContents).URI != "test://given" {
			t.Fatalf("first message = %#v; want the named resource embedded", pr.Messages[0].Content)
		}
		if tc, ok := pr.Messages[1].Content.(mcp.TextContent); !ok || tc.Text != "Please process the embedded resource above." {
			t.Fatalf("second message = %#v", pr.Messages[1].Content)
		}
		req.Params.Name, req.Params.Arguments = "test_prompt_with_image", nil
		if pr, err = ec.c.GetPrompt(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if img, ok := pr.Messages[0].Content.(mcp.ImageContent); !ok || img.MIMEType != "image/png" || img.Data == "" {
			t.Fatalf("first message = %#v; want the image", pr.Messages[0].Content)
		}
	})
}

// fakeModel answers sampling requests and elicitations as a client would,
// and remembers what it was asked.
type fakeModel struct {
	mu       sync.Mutex
	sampled  []mcp.CreateMessageParams
	elicited []mcp.ElicitationParams
}

func (f *fakeModel) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	f.mu.Lock()
	f.sampled = append(f.sampled, req.CreateMessageParams)
	f.mu.Unlock()
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("forty-two")},
		Model: "fake-model", StopReason: "endTurn"}, nil
}

func (f *fakeModel) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	f.mu.Lock()
	f.elicited = append(f.elicited, req.Params)
	f.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"username": "ada", "email": "ada@example.com"}}}, nil
}

// askingClient connects on one era and transport ("http": to url; "no
// daemon" or "relay": a stdio cairn serve on w), declaring sampling and
// elicitation when model is not nil.
func askingClient(t *testing.T, w *workspace, url, tr string, modern bool, model *fakeModel) *eraClient {
	t.Helper()
	opts := eraOptions(modern)
	if model != nil {
		opts = append(opts, client.WithSamplingHandler(model), client.WithElicitationHandler(model))
	}
	ec := &eraClient{t: t, name: "asking-client", modern: modern, stderr: &syncBuffer{}}
	if tr != "http" {
		env := append([]string{}, w.env...)
		if tr == "relay" {
			env = append(env, sharedEnv...)
		}
		st := transport.NewStdioWithOptions(cairnBin, env, []string{"serve"},
			transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
				cmd := exec.CommandContext(ctx, command, args...)
				cmd.Env, cmd.Dir = env, w.root
				return cmd, nil
			}),
			transport.WithCommandStderrWriter(ec.stderr))
		ec.connect(client.NewClient(st, opts...))
		return ec
	}
	var topts []transport.StreamableHTTPCOption
	if !modern {
		// mcp-go's server sends sampling/createMessage on the session's
		// GET stream (elicitation on the call's own stream when it can).
		//lint:ignore SA1019 the 2025-11-25 era is under test
		topts = append(topts, transport.WithContinuousListening())
	}
	ht, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	ec.connect(client.NewClient(ht, opts...))
	return ec
}

// callErr calls a tool that must fail and returns its error envelope.
func (ec *eraClient) callErr(name string, args map[string]any) map[string]any {
	ec.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := ec.c.CallTool(ec.t.Context(), req)
	if err != nil {
		ec.t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		ec.t.Fatalf("%s succeeded, want an error: %v", name, res.StructuredContent)
	}
	env, _ := res.StructuredContent.(map[string]any)
	e, _ := env["error"].(map[string]any)
	return e
}

// A plugin's sdk.Sample and sdk.Elicit reach the client that made the call
// and return its answer, over HTTP and stdio (own host and relay); a client
// that cannot be asked (no capability, protocol 2026-07-28) gets a typed
// error instead.
func TestPluginAsksTheClient(t *testing.T) {
	for _, tr := range []string{"http", "no daemon", "relay"} {
		t.Run(tr, func(t *testing.T) {
			w := everythingWorkspace(t)
			url := ""
			if tr == "http" {
				url, _ = startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
			}
			// Each subtest's client (and on stdio its cairn) ends with it:
			// without a daemon, one cairn at a time holds the stores.
			pluginAsksTheClient(t, func(t *testing.T, modern bool, model *fakeModel) *eraClient {
				return askingClient(t, w, url, tr, modern, model)
			})
		})
	}
}

func pluginAsksTheClient(t *testing.T, connect func(t *testing.T, modern bool, model *fakeModel) *eraClient) {
	t.Run("capable client", func(t *testing.T) {
		model := &fakeModel{}
		ec := connect(t, false, model)
		out, _ := ec.call("test_sampling", map[string]any{"prompt": "What is six times seven?"})
		if out["text"] != "LLM response: forty-two" {
			t.Fatalf("test_sampling = %v; want the client model's answer", out)
		}
		model.mu.Lock()
		if len(model.sampled) != 1 || model.sampled[0].MaxTokens != 100 || len(model.sampled[0].Messages) != 1 {
			t.Fatalf("the client was asked %+v", model.sampled)
		}
		if tc, ok := model.sampled[0].Messages[0].Content.(mcp.TextContent); !ok || tc.Text != "What is six times seven?" {
			t.Fatalf("sampled message = %#v", model.sampled[0].Messages[0].Content)
		}
		model.mu.Unlock()

		out, _ = ec.call("test_elicitation", map[string]any{"message": "Who are you?"})
		if out["text"] != `User response: action=accept, content={"email":"ada@example.com","username":"ada"}` {
			t.Fatalf("test_elicitation = %v; want the user's answer", out)
		}
		model.mu.Lock()
		if len(model.elicited) != 1 || model.elicited[0].Message != "Who are you?" {
			t.Fatalf("the client was asked %+v", model.elicited)
		}
		model.mu.Unlock()
	})
	for _, tc := range []struct {
		name   string
		modern bool
		model  *fakeModel
	}{
		{"client without the capabilities", false, nil},
		{"2026-07-28 client", true, &fakeModel{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec := connect(t, tc.modern, tc.model)
			for tool, args := range map[string]map[string]any{
				"test_sampling":    {"prompt": "x"},
				"test_elicitation": {"message": "x"},
			} {
				if e := ec.callErr(tool, args); e["code"] != "ERR_CLIENT_UNSUPPORTED" {
					t.Errorf("%s = %v; want ERR_CLIENT_UNSUPPORTED", tool, e)
				}
			}
			if tc.model != nil && (len(tc.model.sampled) > 0 || len(tc.model.elicited) > 0) {
				t.Errorf("a 2026-07-28 client was sent a server request: %+v %+v", tc.model.sampled, tc.model.elicited)
			}
		})
	}
}
