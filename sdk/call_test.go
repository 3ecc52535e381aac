package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
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

// dialLane serves p's real lane server on a Unix socket and dials it.
func dialLane(t *testing.T, p *Plugin) *lane.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		conn, err := ln.Accept()
		ln.Close()
		if err == nil {
			_ = (&server{p: p}).laneServer().ServeConn(ctx, conn)
		}
	}()
	c, err := lane.Dial(context.Background(), path, protocol.MaxMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); cancel(); <-served })
	return c
}

// TestLaneMatchesTheStream: the call lane and the CallTool stream answer
// alike (output, status, typed errors, caller), and both validate every
// call: nothing in a request waives the check (docs/decisions.md D34).
func TestLaneMatchesTheStream(t *testing.T) {
	p := countPlugin()
	c, lc := dialPlugin(t, p), dialLane(t, p)
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
			onLane, err := lc.Call(t.Context(), req, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			streamed := streamCall(t, c, req)
			for via, res := range map[string]*pb.ToolResult{"lane": onLane, "stream": streamed} {
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

// TestCallEventsAlikeOnBothTransports: the progress and log lines a
// request asks for reach the host in the handler's order and before the
// result, on the lane as on the stream; a log line below the requested
// level, and progress nobody asked for, are not sent; a report made after
// the call returned changes nothing.
func TestCallEventsAlikeOnBothTransports(t *testing.T) {
	late := make(chan func(), 2)
	p := New("eventtest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	AddTool(p, Tool[struct{}, struct{}]{
		Name: "eventtest_chatter", Description: "Reports progress and logs.",
		Handler: func(ctx context.Context, _ struct{}) (struct{}, error) {
			ReportProgress(ctx, 1, 2, "one")
			Log(ctx, LogDebug, "too low", nil)
			Log(ctx, LogWarning, "careful", map[string]any{"n": 1})
			ReportProgress(ctx, 2, 2, "two")
			Log(ctx, LogInfo, "done", nil)
			late <- func() { ReportProgress(ctx, 3, 2, "late"); Log(ctx, LogError, "late", nil) }
			return struct{}{}, nil
		},
	})
	c, lc := dialPlugin(t, p), dialLane(t, p)
	type run func(req *pb.CallToolRequest, onProgress func(*pb.Progress), onLog func(*pb.LogMessage)) *pb.ToolResult
	transports := map[string]run{
		"lane": func(req *pb.CallToolRequest, onProgress func(*pb.Progress), onLog func(*pb.LogMessage)) *pb.ToolResult {
			res, err := lc.Call(t.Context(), req, onProgress, onLog)
			if err != nil {
				t.Fatal(err)
			}
			return res
		},
		"stream": func(req *pb.CallToolRequest, onProgress func(*pb.Progress), onLog func(*pb.LogMessage)) *pb.ToolResult {
			st, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := st.Recv()
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case ev.GetProgress() != nil:
					onProgress(ev.GetProgress())
				case ev.GetLog() != nil:
					onLog(ev.GetLog())
				case ev.GetResult() != nil:
					return ev.GetResult()
				}
			}
		},
	}
	for via, call := range transports {
		for _, tc := range []struct {
			name string
			req  *pb.CallToolRequest
			want string
		}{
			{"progress and info logs", &pb.CallToolRequest{Tool: "eventtest_chatter", WantsProgress: true, LogLevel: LogInfo},
				`progress 1/2 one; log warning eventtest {"message":"careful","n":1}; progress 2/2 two; log info eventtest "done"`},
			{"warnings only", &pb.CallToolRequest{Tool: "eventtest_chatter", LogLevel: LogWarning},
				`log warning eventtest {"message":"careful","n":1}`},
			{"nothing asked", &pb.CallToolRequest{Tool: "eventtest_chatter"}, ``},
		} {
			t.Run(via+"/"+tc.name, func(t *testing.T) {
				var got []string
				res := call(tc.req,
					func(pr *pb.Progress) {
						got = append(got, fmt.Sprintf("progress %g/%g %s", pr.Progress, pr.Total, pr.Message))
					},
					func(m *pb.LogMessage) { got = append(got, fmt.Sprintf("log %s %s %s", m.Level, m.Logger, m.Data)) })
				if res.Error != nil || res.Status != 200 {
					t.Fatalf("result %v", res)
				}
				(<-late)() // reports after the result: nothing may be sent
				if s := strings.Join(got, "; "); s != tc.want {
					t.Fatalf("events:\n got %s\nwant %s", s, tc.want)
				}
			})
		}
	}
}

// TestInvokeAlwaysValidates: in-process calls are not on the trusted path.
func TestInvokeAlwaysValidates(t *testing.T) {
	res := countPlugin().invoke(t.Context(), "calltest_count", []byte(`{"n":99}`))
	if res.Err == nil || res.Err.Code != "ERR_INVALID_INPUT" {
		t.Fatalf("Invoke accepted arguments its schema refuses: %+v", res)
	}
}

// TestSchemasCompileOnFirstUse: a schema that does not compile no longer
// stops AddTool; CheckSchemas names it, and a validating call fails typed.
func TestSchemasCompileOnFirstUse(t *testing.T) {
	p := countPlugin()
	if err := p.checkSchemas(); err != nil {
		t.Fatalf("good schemas refused: %v", err)
	}
	AddTool(p, Tool[countIn, countOut]{
		Name: "calltest_bad", Description: "Bad schema.", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"nonsense"}}}`),
		Handler: func(context.Context, countIn) (countOut, error) { return countOut{}, nil },
	})
	if err := p.checkSchemas(); err == nil {
		t.Fatal("CheckSchemas accepted a schema that does not compile")
	}
	res := p.invoke(t.Context(), "calltest_bad", []byte(`{"n":1}`))
	if res.Err == nil || res.Status != 500 {
		t.Fatalf("call with an uncompilable schema: %+v", res)
	}
}
