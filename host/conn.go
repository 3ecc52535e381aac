package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// connSeq numbers connection sessions for their ids.
var connSeq atomic.Uint64

// connSession is one MCP session over a byte stream (a relay's Unix socket
// connection). mcp-go's stdio server keeps a single package-level session,
// so a daemon serving many relays needs a session of its own per stream.
type connSession struct {
	id            string
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	clientInfo    atomic.Value // mcp.Implementation
	clientCaps    atomic.Value // mcp.ClientCapabilities
}

func (s *connSession) SessionID() string { return s.id }
func (s *connSession) Initialize()       { s.initialized.Store(true) }
func (s *connSession) Initialized() bool { return s.initialized.Load() }
func (s *connSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notifications
}

func (s *connSession) GetClientInfo() mcp.Implementation {
	v, _ := s.clientInfo.Load().(mcp.Implementation)
	return v
}
func (s *connSession) SetClientInfo(ci mcp.Implementation) { s.clientInfo.Store(ci) }
func (s *connSession) GetClientCapabilities() mcp.ClientCapabilities {
	v, _ := s.clientCaps.Load().(mcp.ClientCapabilities)
	return v
}
func (s *connSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.clientCaps.Store(c) }

// sessionAgentKey carries a relayed session's CAIRN_AGENT_ID (D4 stays per
// session when many agent hosts share one daemon).
type sessionAgentKey struct{}

// ConnOptions tune ServeConn.
type ConnOptions struct {
	// AgentID is the session's CAIRN_AGENT_ID; it wins over the client's
	// name for this session only.
	AgentID string
}

// maxLine bounds one JSON-RPC message from a client.
const maxLine = 64 << 20

// ServeConn serves one MCP session of newline-delimited JSON-RPC over rw
// until the peer closes it or ctx ends. Requests run concurrently, so a slow
// tool call does not hold up a cancellation or a ping.
func (h *Host) ServeConn(ctx context.Context, rw io.ReadWriter, opts ConnOptions) error {
	sess := &connSession{
		id:            "conn-" + strconv.FormatUint(connSeq.Add(1), 10),
		notifications: make(chan mcp.JSONRPCNotification, 128),
	}
	if err := h.mcp.RegisterSession(ctx, sess); err != nil {
		return err
	}
	defer h.mcp.UnregisterSession(context.Background(), sess.id)
	ctx = h.mcp.WithContext(ctx, sess)
	if opts.AgentID != "" {
		ctx = context.WithValue(ctx, sessionAgentKey{}, opts.AgentID)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wmu sync.Mutex
	write := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			h.log.Warn("cannot encode a message for a relayed session", "session", sess.id, "error", err)
			return
		}
		wmu.Lock()
		defer wmu.Unlock()
		if _, err := rw.Write(append(b, '\n')); err != nil {
			cancel()
		}
	}
	go func() {
		for {
			select {
			case n := <-sess.notifications:
				write(n)
			case <-ctx.Done():
				return
			}
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	r := bufio.NewReaderSize(rw, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			var probe struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &probe) != nil {
				write(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(mcp.PARSE_ERROR, "Parse error", nil)})
			} else if probe.Method == "" {
				// A response to a server request; cairn sends none.
			} else if len(probe.ID) == 0 {
				// Notifications (initialized, cancelled) are handled in
				// order, on the read loop.
				if resp := h.mcp.HandleMessage(ctx, line); resp != nil {
					write(resp)
				}
			} else {
				msg := append([]byte(nil), line...)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp := h.mcp.HandleMessage(ctx, msg); resp != nil {
						write(resp)
					}
				}()
			}
		}
		if err != nil {
			cancel()
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// readLine reads one newline-terminated message of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		part, err := r.ReadSlice('\n')
		buf = append(buf, part...)
		if err == bufio.ErrBufferFull {
			if len(buf) > maxLine {
				return nil, errors.New("message longer than 64 MB")
			}
			continue
		}
		return buf, err
	}
}
