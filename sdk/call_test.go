package sdk

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

type countIn struct {
	N int `json:"n" jsonschema:"minimum=1,maximum=10"`
}

type countOut struct {
	N      int    `json:"n"`
	Caller string `json:"caller"`
}

// countPlugin has one tool whose schema bounds n to 1..10; its handler
// itself accepts any n, so a call that skipped validation is visible.
func countPlugin() *Plugin {
	p := New("calltest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	AddTool(p, Tool[countIn, countOut]{
		Name: "calltest_count", Description: "Echoes n.",
		Handler: func(ctx context.Context, in countIn) (countOut, error) {
			return countOut{N: in.N, Caller: CallerFrom(ctx).ID}, nil
		},
	})
	return p
}

// dialPlugin serves p's protocol server in memory.
func dialPlugin(t *testing.T, p *Plugin) pb.PluginClient {
	t.Helper()
	return pb.NewPluginClient(dialBufconn(t, func(srv *grpc.Server) { pb.RegisterPluginServer(srv, &server{p: p}) }))
}

// dialBufconn serves what register registers on an in-memory listener and
// returns a client connection to it; both end with the test.
func dialBufconn(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return conn
}

// streamCall runs CallTool and returns its result event.
func streamCall(t *testing.T, c pb.PluginClient, req *pb.CallToolRequest) *pb.ToolResult {
	t.Helper()
	st, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r := ev.GetResult(); r != nil {
			return r
		}
	}
}

// TestUnaryCallMatchesTheStream: the unary Call and the CallTool stream
// answer alike (output, status, typed errors, caller), and both validate
// every call: nothing in a request waives the check (docs/decisions.md D34).
func TestUnaryCallMatchesTheStream(t *testing.T) {
	c := dialPlugin(t, countPlugin())
	cases := []struct {
		name     string
		args     string
		wantCode string
		wantN    float64
	}{
		{"valid", `{"n":3}`, "", 3},
		{"schema violation refused by the plugin", `{"n":99}`, "ERR_INVALID_INPUT", 0},
		{"raw JSON rule refused by the plugin", "{\"n\":1,\"x\":\"\xff\"}", "ERR_INVALID_INPUT", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &pb.CallToolRequest{Tool: "calltest_count", Arguments: []byte(tc.args), Caller: &pb.Caller{Id: "agent-7"}}
			unary, err := c.Call(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			streamed := streamCall(t, c, req)
			for via, res := range map[string]*pb.ToolResult{"unary": unary, "stream": streamed} {
				if tc.wantCode != "" {
					if res.Error == nil || res.Error.Code != tc.wantCode || res.Status != 400 {
						t.Fatalf("%s: result %v, want %s 400", via, res, tc.wantCode)
					}
					continue
				}
				if res.Error != nil {
					t.Fatalf("%s: error %v", via, res.Error)
				}
				var out map[string]any
				if err := json.Unmarshal(res.Output, &out); err != nil {
					t.Fatal(err)
				}
				if out["n"] != tc.wantN || out["caller"] != "agent-7" || res.Status != 200 {
					t.Fatalf("%s: output %s status %d", via, res.Output, res.Status)
				}
			}
		})
	}
}

// TestInvokeAlwaysValidates: in-process calls are not on the trusted path.
func TestInvokeAlwaysValidates(t *testing.T) {
	res := countPlugin().Invoke(t.Context(), "calltest_count", []byte(`{"n":99}`))
	if res.Err == nil || res.Err.Code != "ERR_INVALID_INPUT" {
		t.Fatalf("Invoke accepted arguments its schema refuses: %+v", res)
	}
}

// TestSchemasCompileOnFirstUse: a schema that does not compile no longer
// stops AddTool; CheckSchemas names it, and a validating call fails typed.
func TestSchemasCompileOnFirstUse(t *testing.T) {
	p := countPlugin()
	if err := p.CheckSchemas(); err != nil {
		t.Fatalf("good schemas refused: %v", err)
	}
	AddTool(p, Tool[countIn, countOut]{
		Name: "calltest_bad", Description: "Bad schema.", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"nonsense"}}}`),
		Handler: func(context.Context, countIn) (countOut, error) { return countOut{}, nil },
	})
	if err := p.CheckSchemas(); err == nil {
		t.Fatal("CheckSchemas accepted a schema that does not compile")
	}
	res := p.Invoke(t.Context(), "calltest_bad", []byte(`{"n":1}`))
	if res.Err == nil || res.Status != 500 {
		t.Fatalf("call with an uncompilable schema: %+v", res)
	}
}
