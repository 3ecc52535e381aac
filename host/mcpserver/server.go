// Package mcpserver is the host's MCP glue: it serves MCP sessions over
// the transports (host/transport/...) and turns their requests into the
// host's work. Tool calls become pipeline calls (host/pipeline) and their
// outcomes MCP results; the plugins' resources, prompts and completions
// are published and routed back to them; it keeps resource subscriptions,
// MCP tasks, the skills extension, a plugin's asks of its caller's
// client (elicitation, sampling) and the question to the person at the
// client when a move waits for their approval. It is the only package of
// the host besides the transports and host/clientsession that speaks
// mcp-go.
package mcpserver

import (
	"context"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/cluster"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/host/transport/stdio"
)

// Config is what the MCP server serves from.
type Config struct {
	// Version of the host, told at initialize.
	Version string
	Logger  hclog.Logger
	Bus     *events.Bus
	Catalog *catalog.Catalog
	Fleet   *fleet.Fleet
	System  *systemtools.Tools
	// Pipeline runs every tool call; its last stage is Dispatch.
	Pipeline *pipeline.Pipeline
	// Cluster is the cluster bus while a transport serves on PostgreSQL.
	Cluster *cluster.Membership
	// Limits bound every session, on every transport.
	Limits clientsession.Limits
}

// Server is the host's MCP server.
type Server struct {
	// publishMu holds a sync of prompts or resources from its snapshot to
	// its Set: two plugins adopted at once must not publish their
	// snapshots in the wrong order, the later one missing the other's.
	publishMu sync.Mutex
	// asks are the running calls whose client a plugin may ask.
	asks clientAsks
	// callbacks are the running calls whose plugin may call other areas'
	// tools (tool_callback.go).
	callbacks toolCallbacks
	log       hclog.Logger
	bus       *events.Bus
	catalog   *catalog.Catalog
	fleet     *fleet.Fleet
	system    *systemtools.Tools
	pipe      *pipeline.Pipeline
	mcp       *server.MCPServer
	// approvals asks a person at the client about a call's 428
	// ApprovalRequired (docs/decisions.md D45).
	approvals approvalBridge

	mu        sync.Mutex
	resources map[string][]server.ServerResource
	templates map[string][]server.ServerResourceTemplate
	// auth, when set, guards the HTTP transport with API keys.
	auth httpserve.Authenticator
	// resKeys fingerprints each plugin's listed resources, so a refresh
	// that finds nothing new changes nothing (and notifies nobody).
	resKeys map[string]string
	// logs fans log lines out to the sessions that asked for them.
	logs   *clientsession.Logs
	limits clientsession.Limits
	// prompts holds the plugins' prompts; subs the sessions' resource
	// subscriptions; unwatch ends the bus watches that serve both.
	prompts *promptTable
	subs    *clientsession.Subscriptions
	unwatch func()
	cluster *cluster.Membership
	// projects remembers the project each session used last (D31).
	projects clientsession.Projects

	// stdio serves the byte-stream sessions (ServeConn, ServeStdio); http
	// the HTTP listeners (ServeHTTP, ServeHTTPWith).
	stdio *stdio.Server
	http  *httpserve.Server
}

// instructions is what the server tells every client at initialize.
const instructions = "cairn gives you a task pipeline, a tamper-evident decision trail and a spec-driven workflow. " +
	"Your session has an active project from the start (CAIRN_PROJECT, else your workspace directory's name), so task_create and task_next_actions work without naming one. " +
	"Start with task_next_actions or skill_list; record decisions with thought_record."

// New prepares the MCP server and its transports; it starts watching the
// bus for live prompts and resource updates (StopWatching ends that).
func New(c Config) *Server {
	srv := &Server{
		log: c.Logger, bus: c.Bus, catalog: c.Catalog, fleet: c.Fleet, system: c.System, pipe: c.Pipeline,
		resources: map[string][]server.ServerResource{}, templates: map[string][]server.ServerResourceTemplate{},
		resKeys: map[string]string{}, limits: c.Limits, cluster: c.Cluster,
	}
	srv.approvals = approvalBridge{host: hostApprovals{srv}, signer: newApprovalSigner()}
	srv.logs = clientsession.NewLogs()
	if il, ok := c.Logger.(hclog.InterceptLogger); ok {
		il.RegisterSink(srv.logs)
	}
	// The transports see the host only through sessionHooks.
	srv.stdio = stdio.New(sessionHooks{srv}, srv.log)
	srv.http = httpserve.New(sessionHooks{srv}, c.Limits, srv.log)
	// Plugins add resources while they run (an sdd skill registered by a
	// tool call): ask them again whenever a client lists resources.
	hooks := &server.Hooks{}
	hooks.AddBeforeListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest) { srv.refreshResources(ctx) })
	hooks.AddBeforeListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest) { srv.refreshResources(ctx) })
	srv.prompts, srv.subs = newPromptTable(), clientsession.NewSubscriptions()
	hooks.AddBeforeListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest) { srv.refreshPrompts(ctx) })
	srv.hookSubscriptions(hooks)
	srv.projects.Hook(hooks)
	srv.unwatch = srv.watchProtocolEvents()
	// Each session lists only its own toolsets' and mode's tools (D21).
	hooks.AddAfterListTools(func(ctx context.Context, _ any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res != nil {
			res.Tools = srv.filterListed(ctx, res.Tools)
			if req != nil && req.Params.Meta != nil && mcp.IsModernProtocol(req.Params.Meta.ProtocolVersion()) {
				// 2026-07-28 has no execution member: the server
				// decides which calls become MCP tasks (mcp_tasks.go).
				for i := range res.Tools {
					res.Tools[i].Execution = nil
				}
			}
		}
		// The session has its tools: the plugins it did not wait for
		// start now (docs/decisions.md D46).
		if srv.fleet != nil {
			srv.fleet.StartLater()
		}
	})
	srv.mcp = server.NewMCPServer("cairn", c.Version,
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithExtensions(extensionsCapability()),
		// MCP tasks are the host's own (mcp_tasks.go): mcp-go only
		// declares the capability.
		server.WithTaskCapabilities(true, true, true),
		server.WithPromptFilter(srv.filterPrompts),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{srv}),
		server.WithResourceCompletionProvider(completions{srv}),
		server.WithRecovery(),
		server.WithLogging(),
		server.WithInstructions(instructions),
	)
	return srv
}

// StopWatching ends the bus watches behind live prompts and resource
// subscriptions (once).
func (srv *Server) StopWatching() { srv.unwatch() }
