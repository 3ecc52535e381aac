package e2e

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var (
	everythingOnce sync.Once
	everythingErr  string
)

// everythingFixture builds examples/cairn-plugin-everything (once per run)
// and returns its path.
func everythingFixture(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "cairn-plugin-everything")
	everythingOnce.Do(func() {
		build := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/examples/cairn-plugin-everything")
		if out, err := build.CombinedOutput(); err != nil {
			everythingErr = err.Error() + "\n" + string(out)
		}
	})
	if everythingErr != "" {
		t.Fatalf("build the fixture plugin: %s", everythingErr)
	}
	return bin
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
					url, _ := startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
					ec = httpEraClient(t, url, modern)
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
