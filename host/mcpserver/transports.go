package mcpserver

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/host/transport/stdio"
)

// sessionHooks is all the transports see of the host: they open sessions
// and hand over messages through it, never through the Server itself.
type sessionHooks struct{ srv *Server }

var (
	_ stdio.Handler     = sessionHooks{}
	_ httpserve.Handler = sessionHooks{}
)

// Enter keeps the host in the cluster while a session runs: on PostgreSQL
// its events reach the other servers and theirs reach it; without the
// database it still serves, degraded.
func (t sessionHooks) Enter(ctx context.Context) (leave func()) {
	_, leave, err := t.srv.cluster.Enter(ctx)
	if err != nil {
		t.srv.log.Warn("serving without the cluster bus", "error", err)
		return func() {}
	}
	return leave
}

func (t sessionHooks) Register(ctx context.Context, sess server.ClientSession) (context.Context, func(), error) {
	if err := t.srv.mcp.RegisterSession(ctx, sess); err != nil {
		return ctx, nil, err
	}
	return t.srv.mcp.WithContext(ctx, sess), func() { t.srv.mcp.UnregisterSession(context.Background(), sess.SessionID()) }, nil
}

func (t sessionHooks) Serving(sess clientsession.Listener, s *clientsession.Settings) (done func()) {
	t.srv.announceProject(s)
	t.srv.logs.Add(sess)
	return func() { t.srv.logs.Remove(sess) }
}

func (t sessionHooks) HandleMessage(ctx context.Context, msg []byte) mcp.JSONRPCMessage {
	return t.srv.mcp.HandleMessage(ctx, msg)
}

func (t sessionHooks) LiftArguments(ctx context.Context, p jsonrpc.Probe, msg []byte) (context.Context, []byte) {
	return t.srv.liftProbed(ctx, p, msg)
}

func (t sessionHooks) RefuseSubscription(ctx context.Context, msg []byte) (mcp.JSONRPCError, bool) {
	return t.srv.refuseSubscription(ctx, msg)
}

func (t sessionHooks) MCPServer() *server.MCPServer { return t.srv.mcp }

func (t sessionHooks) DefaultSessionSettings() *clientsession.Settings {
	return t.srv.catalog.DefaultSessionSettings()
}

func (t sessionHooks) Toolsets() []string { return t.srv.catalog.ChoosableToolsets() }

func (t sessionHooks) ToolFacts(name string) (httpserve.ToolFacts, bool) {
	return t.srv.toolFacts(name)
}

func (t sessionHooks) EnterCluster(ctx context.Context) (*pgxpool.Pool, func(), error) {
	c, leave, err := t.srv.cluster.Enter(ctx)
	if err != nil || c == nil {
		return nil, leave, err
	}
	return c.Pool, leave, nil
}

func (t sessionHooks) LiftToolArguments(ctx context.Context, method string, msg []byte) (context.Context, []byte) {
	return t.srv.liftToolArguments(ctx, method, msg)
}

func (t sessionHooks) AnswerExtension(ctx context.Context, method string, msg []byte) (mcp.JSONRPCMessage, bool) {
	if resp, ok := t.srv.answerMCPTasks(ctx, method, msg); ok {
		return resp, true
	}
	return t.srv.answerSkills(ctx, method, msg)
}

func (t sessionHooks) CallTool(ctx context.Context, p jsonrpc.Probe, line []byte) (mcp.JSONRPCMessage, bool) {
	return t.srv.callToolDirect(ctx, p, line)
}
