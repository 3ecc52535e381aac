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
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version is the host version, set at build time with
// -ldflags "-X github.com/cairn-mcp/cairn/host.Version=...".
var Version = "0.1.0-dev"

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

// SetAuthenticator makes ServeHTTP require an API key on every request.
func (h *Host) SetAuthenticator(a Authenticator) {
	h.mu.Lock()
	h.auth = a
	h.mu.Unlock()
}

// ServeHTTP serves MCP over streamable HTTP at /mcp on addr until ctx ends.
// Every client gets its own session. ready, when non-nil, receives the bound
// address once the listener is up.
func (h *Host) ServeHTTP(ctx context.Context, addr string, ready func(net.Addr)) error {
	h.mu.Lock()
	auth := h.auth
	h.mu.Unlock()
	return h.ServeHTTPWith(ctx, addr, HTTPOptions{Auth: auth}, ready)
}

// ServeHTTPWith is ServeHTTP with the listener's own options: the shared
// daemon opens one listener per `cairn serve --http` (see serve_options.go).
func (h *Host) ServeHTTPWith(ctx context.Context, addr string, o HTTPOptions, ready func(net.Addr)) error {
	auth := o.Auth
	if err := CheckHTTPAddr(addr, auth != nil); err != nil {
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
	cl, leave, err := h.enterCluster(ctx)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer leave()
	sessions := newHTTPSessions(hs.sessionIdle, h.limits.MaxCalls)
	sessions.log = h.log.Named("http")
	if cl != nil {
		sessions.shared = &sharedSessions{pool: cl.pool, idle: hs.sessionIdle}
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
			server.WithCORSAllowedHeaders("Authorization", "Content-Type", server.HeaderKeySessionID, mcp.HeaderProtocolVersion, "Last-Event-ID"),
		))
	}
	mcpHTTP := server.NewStreamableHTTPServer(h.mcp, opts...)
	mux := http.NewServeMux()
	mux.Handle("/mcp", o.withSession(h.httpHandler(auth, sessions, hs, mcpHTTP)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"timestamp":%q}`, Timestamp(time.Now()))
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: httpHeaderTimeout,
		// Bodies have their own deadline (boundBody); no ReadTimeout, which
		// would also end the long reads of event streams' connections.
		IdleTimeout: httpIdleTimeout,
		ErrorLog:    log.New(h.log.Named("http").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}), "", 0),
	}
	if ready != nil {
		ready(ln.Addr())
	}
	h.log.Info("serving MCP over streamable HTTP", "api_keys_required", auth != nil, "allowed_origins", hs.allowedOrigins,
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

// httpHandler is the /mcp endpoint: the Host and Origin checks, then the
// API key (when required), the message-size bound, the session check, and
// mcp-go's streamable HTTP server. Headers that protocol revisions add are
// read by mcp-go or, for cairn's own checks, in needsSession.
func (h *Host) httpHandler(auth Authenticator, sessions *httpSessions, hs httpSettings, mcpHTTP http.Handler) http.Handler {
	if hs.bodyTimeout <= 0 {
		hs.bodyTimeout = DefaultHTTPBodyTimeout
	}
	if hs.maxPerKey <= 0 {
		hs.maxPerKey = DefaultHTTPMaxPerKey
	}
	next := h.liftHTTPArguments(guardSessions(sessions, h.protocolErrors(mcpHTTP)))
	next = boundBody(h.limits.MaxMessage, hs.bodyTimeout, next)
	if auth != nil {
		next = requireAPIKey(auth, limitPerKey(newPerKeyLimit(hs.maxPerKey), next))
	}
	return guardOrigin(newOriginPolicy(hs.allowedOrigins), next)
}
