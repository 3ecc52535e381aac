package mcpserver

import (
	"context"
	"io"
	"net"

	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/host/transport/stdio"
)

// ServeConn serves one MCP session of newline-delimited JSON-RPC over r and
// w (a relay's connection) until the peer closes it or ctx ends; what opts
// leaves unset is the host's.
func (srv *Server) ServeConn(ctx context.Context, r io.Reader, w io.Writer, opts stdio.Options) error {
	return srv.stdio.Serve(ctx, r, w, srv.connOptions(opts))
}

// ServeStdio serves one MCP session over in and out until the client closes
// in or ctx ends, with the host's own session settings and the per-session
// limits of every transport.
func (srv *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return srv.stdio.ServeStdio(ctx, in, out, srv.connOptions(stdio.Options{}))
}

func (srv *Server) connOptions(o stdio.Options) stdio.Options {
	if o.MaxMessage <= 0 {
		o.MaxMessage = srv.limits.MaxMessage
	}
	if o.MaxConcurrentCalls <= 0 {
		o.MaxConcurrentCalls = srv.limits.MaxCalls
	}
	if o.Session == nil {
		o.Session = srv.catalog.DefaultSessionSettings()
	}
	return o
}

// SetAuthenticator makes ServeHTTP require an API key on every request.
func (srv *Server) SetAuthenticator(a httpserve.Authenticator) {
	srv.mu.Lock()
	srv.auth = a
	srv.mu.Unlock()
}

// ServeHTTP serves MCP over streamable HTTP at /mcp on addr until ctx ends.
// Every client gets its own session. ready, when non-nil, receives the bound
// address once the listener is up.
func (srv *Server) ServeHTTP(ctx context.Context, addr string, ready func(net.Addr)) error {
	srv.mu.Lock()
	auth := srv.auth
	srv.mu.Unlock()
	return srv.ServeHTTPWith(ctx, addr, httpserve.Options{Auth: auth}, ready)
}

// ServeHTTPWith is ServeHTTP with the listener's own options (the shared
// daemon's listeners); what o leaves unset is the host's.
func (srv *Server) ServeHTTPWith(ctx context.Context, addr string, o httpserve.Options, ready func(net.Addr)) error {
	return srv.http.Serve(ctx, addr, o, ready)
}
