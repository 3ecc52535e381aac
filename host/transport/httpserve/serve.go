// Package httpserve is the streamable HTTP transport: MCP at /mcp, with
// the Host and Origin checks, API keys and their per-key limits, bounded
// bodies, the sessions of protocol revisions that have them (shared through
// PostgreSQL in a cluster) and the JSON-RPC errors stdio clients get too.
// What a message means is the Handler's (the host's) to say.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Handler is what the HTTP transport needs of the host it serves.
type Handler interface {
	// MCPServer is the MCP server mcp-go's streamable HTTP transport runs.
	MCPServer() *server.MCPServer
	// EnterCluster keeps the host in the cluster while a listener serves:
	// pool is the cluster's database, nil without PostgreSQL.
	EnterCluster(ctx context.Context) (pool *pgxpool.Pool, leave func(), err error)
	// LiftToolArguments takes a tools/call's arguments out of msg, for the
	// tool handler to take from the context (docs/decisions.md D33).
	LiftToolArguments(ctx context.Context, method string, msg []byte) (context.Context, []byte)
	// RefuseSubscription answers a resources/subscribe to a URI that does
	// not exist; false for any other message.
	RefuseSubscription(ctx context.Context, msg []byte) (mcp.JSONRPCError, bool)
	// AnswerExtension answers a request of an extension the host serves
	// that mcp-go does not know (the skills extension); false for any
	// other message.
	AnswerExtension(ctx context.Context, method string, msg []byte) (mcp.JSONRPCMessage, bool)
	// DefaultSessionSettings are the host's own client session settings,
	// a listener's when it has none of its own.
	DefaultSessionSettings() *clientsession.Settings
	// Toolsets lists the toolsets of the tools some session may be
	// served, sorted: what a request may choose (docs/decisions.md D39).
	Toolsets() []string
	// ToolFacts describes the tool named name; false when no session may
	// be served it.
	ToolFacts(name string) (ToolFacts, bool)
}

// Server serves the HTTP listeners of one host.
type Server struct {
	h      Handler
	limits clientsession.Limits
	log    hclog.Logger
}

// New returns a Server for h whose sessions have limits.
func New(h Handler, limits clientsession.Limits, log hclog.Logger) *Server {
	return &Server{h: h, limits: limits, log: log}
}

// CheckHTTPAddr refuses addresses that would expose the server beyond this
// machine without authentication: unauthenticated, only loopback binds are
// allowed.
func CheckHTTPAddr(addr string, authenticated bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errs.Newf(400, errs.ConfigInvalid, "--http %q: %v (expected host:port, for example 127.0.0.1:8765)", addr, err)
	}
	if authenticated || host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return errs.Newf(400, errs.ConfigInvalid, "--http %q: only loopback addresses (127.0.0.1, ::1, localhost) may be bound without authentication; drop --no-auth to require API keys", addr)
	}
	return nil
}

// Serve serves MCP over streamable HTTP at /mcp on addr until ctx ends,
// with the listener's own options: the shared daemon opens one listener per
// `cairn serve --http` (see serve_options.go). Every client gets its own
// session. ready, when non-nil, receives the bound address once the
// listener is up.
func (s *Server) Serve(ctx context.Context, addr string, o Options, ready func(net.Addr)) error {
	auth := o.Auth
	oauth, err := loadOAuthSettings(o.getenv(), "")
	if err != nil {
		return err
	}
	if err := CheckHTTPAddr(addr, auth != nil || oauth.enabled()); err != nil {
		return err
	}
	hs, err := loadHTTPSettings(o.getenv())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errs.Newf(500, errs.InitFailed, "cannot listen on %s: %v", addr, err)
	}
	if oauth.enabled() {
		if oauth.resource == "" {
			oauth.resource = "http://" + ln.Addr().String() + "/mcp"
		}
		hs.oauth = newOAuthGate(oauth)
	}
	pool, leave, err := s.h.EnterCluster(ctx)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer leave()
	sessions := newHTTPSessions(hs.sessionIdle, s.limits.MaxCalls)
	sessions.log = s.log.Named("http")
	if pool != nil {
		sessions.shared = &sharedSessions{pool: pool, idle: hs.sessionIdle}
		expiring, stopExpiring := context.WithCancel(context.Background())
		defer stopExpiring()
		go sessions.shared.expireEvery(expiring, sessions.log)
	}
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath("/mcp"),
		server.WithSessionIdManagerResolver(sessions),
		// mcp-go drops its own per-session state on the same schedule.
		server.WithSessionIdleTTL(hs.sessionIdle),
	}
	if len(hs.allowedOrigins) > 0 {
		// Pages of the allowed origins need CORS answers to read ours.
		opts = append(opts, server.WithStreamableHTTPCORS(
			server.WithCORSAllowedOrigins(hs.allowedOrigins...),
			server.WithCORSAllowedHeaders("Authorization", "Content-Type", server.HeaderKeySessionID, mcp.HeaderProtocolVersion, "Last-Event-ID",
				HeaderToolsets, HeaderTools, HeaderExcludeTools, HeaderReadonly),
		))
	}
	mcpHTTP := server.NewStreamableHTTPServer(s.h.MCPServer(), opts...)
	mux := http.NewServeMux()
	endpoint := o.withSession(s.handler(auth, sessions, hs, mcpHTTP))
	mux.Handle("/mcp", endpoint)
	// /mcp/readonly, /mcp/x/{toolset}[/readonly]: a choice in the URL
	// (request_choice.go); other paths under /mcp/ are 404 there.
	mux.Handle("/mcp/", endpoint)
	if hs.oauth != nil {
		// Only with OAuth on: a client that finds metadata stops sending
		// its configured headers (docs/decisions.md D44).
		mux.HandleFunc("/.well-known/oauth-protected-resource", hs.oauth.serveMetadata)
		mux.HandleFunc("/.well-known/oauth-protected-resource/", hs.oauth.serveMetadata)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// The timestamp format of every cairn answer (host.Timestamp).
		fmt.Fprintf(w, `{"ok":true,"timestamp":%q}`, time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: httpHeaderTimeout,
		// Bodies have their own deadline (boundBody); no ReadTimeout, which
		// would also end the long reads of event streams' connections.
		IdleTimeout: httpIdleTimeout,
		ErrorLog:    log.New(s.log.Named("http").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}), "", 0),
	}
	if ready != nil {
		ready(ln.Addr())
	}
	if hs.oauth != nil {
		s.log.Info("accepting OAuth access tokens", "issuer", oauth.issuer, "resource", oauth.resource, "resource_metadata", hs.oauth.metadataURL)
	}
	s.log.Info("serving MCP over streamable HTTP", "api_keys_required", auth != nil, "allowed_origins", hs.allowedOrigins,
		"session_idle", hs.sessionIdle.String(), "url", "http://"+ln.Addr().String()+"/mcp")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = mcpHTTP.Shutdown(sctx)
		_ = srv.Shutdown(sctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// handler is the /mcp endpoint: the Host and Origin checks, then the
// API key (when required), the request's choice of tools (chooseTools), the
// message-size bound, the session check, and
// mcp-go's streamable HTTP server. Headers that protocol revisions add are
// read by mcp-go or, for cairn's own checks, in sessionNeed.
func (s *Server) handler(auth Authenticator, sessions *httpSessions, hs httpSettings, mcpHTTP http.Handler) http.Handler {
	if hs.bodyTimeout <= 0 {
		hs.bodyTimeout = DefaultHTTPBodyTimeout
	}
	if hs.maxPerKey <= 0 {
		hs.maxPerKey = DefaultHTTPMaxPerKey
	}
	next := s.liftArguments(guardSessions(sessions, s.protocolErrors(mcpHTTP)))
	if hs.oauth != nil {
		next = hs.oauth.requireTokenScope(s.h, next)
	}
	next = s.chooseTools(boundBody(s.limits.MaxMessage, hs.bodyTimeout, next))
	if auth != nil || hs.oauth != nil {
		next = requireCredential(auth, hs.oauth, limitPerKey(newPerKeyLimit(hs.maxPerKey), next))
	}
	return guardOrigin(newOriginPolicy(hs.allowedOrigins), next)
}
