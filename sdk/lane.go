package sdk

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/internal/protocol"
)

// laneAcceptWindow is how long the lane's socket waits for the host to dial
// it after Configure; the host dials at once, so this only bounds a socket
// left behind by a host that gave up.
const laneAcceptWindow = 30 * time.Second

// openLane listens for the host's one lane connection on a socket in a
// fresh private directory and serves tool calls on it (package lane). It
// returns the socket's path for ConfigureResponse. The socket and its
// directory are removed once the host has connected (or the window ends,
// or the plugin is stopped first), so nothing else can join the lane and
// nothing is left behind.
func (s *server) openLane() (string, error) {
	dir, err := os.MkdirTemp(os.Getenv("PLUGIN_UNIX_SOCKET_DIR"), "cairn-lane-")
	if err != nil {
		return "", fmt.Errorf("sdk: call lane: %w", err)
	}
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("sdk: call lane: %w", err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(true)
	_ = ul.SetDeadline(time.Now().Add(laneAcceptWindow))
	unlisten := sync.OnceFunc(func() {
		_ = ul.Close()
		_ = os.RemoveAll(dir)
	})
	s.laneMu.Lock()
	s.unlisten = unlisten
	s.laneMu.Unlock()
	go func() {
		conn, err := ul.Accept()
		unlisten()
		s.laneMu.Lock()
		s.unlisten = nil
		s.laneMu.Unlock()
		if err != nil {
			s.p.logger.Debug("the host did not connect to the call lane (an older host?); calls use gRPC", "error", err)
			return
		}
		_ = s.laneServer().ServeConn(context.Background(), conn)
	}()
	return path, nil
}

// closeWaitingLane closes a lane socket the host has not connected to and
// removes its folder: a plugin stopped within the window (a host that
// does not take the lane, or that gave up) leaves nothing in the socket
// directory.
func (s *server) closeWaitingLane() {
	s.laneMu.Lock()
	unlisten := s.unlisten
	s.laneMu.Unlock()
	if unlisten != nil {
		unlisten()
	}
}

// laneServer is the plugin's end of the lane: tool calls, and bus events
// one by one or in batches (each event's handlers run in order; a failing
// or panicking handler fails only its own event's outcome).
func (s *server) laneServer() *lane.Server {
	return &lane.Server{
		Handle: func(ctx context.Context, req *pb.CallToolRequest, send lane.Sender) *pb.ToolResult {
			return convert.ResultToProto(s.call(ctx, convert.CallFromProto(req), send))
		},
		HandleEvent: func(ctx context.Context, ev *pb.Event) error {
			return s.p.deliverEvent(ctx, convert.EventFromProto(ev))
		},
		Inline: s.inlineCall,
		Limit:  protocol.MaxMessageBytes,
		OnPanic: func(v any, stack []byte) {
			s.p.logger.Error("call lane handler panicked", "panic", fmt.Sprint(v), "stack", string(stack))
		},
	}
}

// inlineCall reports whether a call on an idle lane may run where it was
// read: a plain call (not an MCP task) of a tool that is Quick now.
// CAIRN_LANE_INLINE=off hands every call to a worker, as an older SDK
// does (to compare the two, or to rule inline calls out).
func (s *server) inlineCall(req *pb.CallToolRequest) bool {
	if req.Task != nil || !laneInline {
		return false
	}
	s.p.mu.RLock()
	t := s.p.tools[req.Tool]
	s.p.mu.RUnlock()
	return t != nil && t.quick != nil && t.quick()
}

// laneInline is CAIRN_LANE_INLINE, read once.
var laneInline = os.Getenv("CAIRN_LANE_INLINE") != "off"

// laneEventBatches reports whether the lane advertises event batches
// (ConfigureResponse.lane_event_batches). CAIRN_LANE_EVENT_BATCHES=off
// makes the plugin answer as an older SDK does, one event per frame (to
// compare the two, or to rule batches out).
func laneEventBatches() bool {
	return os.Getenv("CAIRN_LANE_EVENT_BATCHES") != "off"
}
