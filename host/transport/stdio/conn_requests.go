package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// connRequests carries server-to-client requests (sampling, elicitation) on
// a connection session: each goes out with an id of its own and waits for
// the client's response line with that id.
type connRequests struct {
	seq     atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan connResponse
	// send writes a message to the client; false when the session is over.
	send func(v any) bool
}

type connResponse struct {
	result json.RawMessage
	err    *mcp.JSONRPCErrorDetails
}

// ask sends method with params to the client and waits for its result.
func (r *connRequests) ask(ctx context.Context, method mcp.MCPMethod, params any) (json.RawMessage, error) {
	if r.send == nil {
		return nil, fmt.Errorf("this connection does not carry requests to the client")
	}
	// A string id of the server's own, so it can never be taken for one of
	// the client's requests.
	id := "cairn-" + strconv.FormatUint(r.seq.Add(1), 10)
	ch := make(chan connResponse, 1)
	r.mu.Lock()
	if r.pending == nil {
		r.pending = map[string]chan connResponse{}
	}
	r.pending[id] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, id)
		r.mu.Unlock()
	}()
	if !r.send(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": string(method), "params": params}) {
		return nil, fmt.Errorf("the session ended before %s was sent", method)
	}
	select {
	case resp := <-ch:
		if resp.err != nil {
			return nil, fmt.Errorf("%s error %d: %s", method, resp.err.Code, resp.err.Message)
		}
		return resp.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands a response line from the client to the request waiting for
// it; it reports false for a response nobody waits for.
func (r *connRequests) deliver(line []byte) bool {
	var resp struct {
		ID     json.RawMessage          `json:"id"`
		Result json.RawMessage          `json:"result"`
		Error  *mcp.JSONRPCErrorDetails `json:"error"`
	}
	if json.Unmarshal(line, &resp) != nil {
		return false
	}
	var id string
	if json.Unmarshal(resp.ID, &id) != nil {
		return false
	}
	r.mu.Lock()
	ch, ok := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if ok {
		ch <- connResponse{result: resp.Result, err: resp.Error}
	}
	return ok
}

// RequestSampling implements server.SessionWithSampling.
func (s *connSession) RequestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	raw, err := s.requests.ask(ctx, mcp.MethodSamplingCreateMessage, req.CreateMessageParams)
	if err != nil {
		return nil, err
	}
	var res mcp.CreateMessageResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the client's sampling result: %w", err)
	}
	return &res, nil
}

// RequestElicitation implements server.SessionWithElicitation.
func (s *connSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := s.requests.ask(ctx, mcp.MethodElicitationCreate, req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the client's elicitation result: %w", err)
	}
	return &res, nil
}
