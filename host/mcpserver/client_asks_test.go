package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// askedSession is a client session that answers sampling and elicitation
// with canned results and declares the capabilities it is given.
type askedSession struct {
	caps mcp.ClientCapabilities
}

func (s *askedSession) SessionID() string { return "asked" }
func (s *askedSession) Initialize()       {}
func (s *askedSession) Initialized() bool { return true }
func (s *askedSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return make(chan mcp.JSONRPCNotification, 1)
}
func (s *askedSession) GetClientInfo() mcp.Implementation              { return mcp.Implementation{Name: "asked"} }
func (s *askedSession) SetClientInfo(mcp.Implementation)               {}
func (s *askedSession) GetClientCapabilities() mcp.ClientCapabilities  { return s.caps }
func (s *askedSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps = c }
func (s *askedSession) RequestSampling(_ context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("echo " + r.Messages[0].Content.(map[string]any)["text"].(string))}, Model: "m"}, nil
}
func (s *askedSession) RequestElicitation(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

func TestAskClientRules(t *testing.T) {
	h := &Server{mcp: server.NewMCPServer("t", "1")}
	sampleParams := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`)
	elicitParams := json.RawMessage(`{"message":"who?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}`)
	for _, tc := range []struct {
		name     string
		caps     mcp.ClientCapabilities
		plugin   string // asking plugin; the call went to "p"
		channel  int    // 0: the call's channel, -1: none open
		method   string
		params   json.RawMessage
		wantCode string
		want     string // substring of the result
	}{
		{"sampling answered", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "p", 0, "sampling/createMessage", sampleParams, "", `"echo hi"`},
		{"elicitation answered", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, "p", 0, "elicitation/create", elicitParams, "", `"decline"`},
		{"sampling not declared", mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, "p", 0, "sampling/createMessage", sampleParams, "ERR_CLIENT_UNSUPPORTED", ""},
		{"elicitation not declared", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "p", 0, "elicitation/create", elicitParams, "ERR_CLIENT_UNSUPPORTED", ""},
		{"another plugin's call", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "q", 0, "sampling/createMessage", sampleParams, "ERR_CLIENT_UNSUPPORTED", ""},
		{"no such channel", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "p", -1, "sampling/createMessage", sampleParams, "ERR_CLIENT_UNSUPPORTED", ""},
		{"other methods refused", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "p", 0, "roots/list", json.RawMessage(`{}`), "ERR_INVALID_INPUT", ""},
		{"params not JSON of the method", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, "p", 0, "sampling/createMessage", json.RawMessage(`[1]`), "ERR_INVALID_INPUT", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := &askedSession{caps: tc.caps}
			ctx := h.mcp.WithContext(context.Background(), sess)
			ch, done := h.asks.open(ctx, "p")
			defer done()
			if ch == 0 {
				t.Fatal("a client with a capability and a session that carries requests got no channel")
			}
			if tc.channel < 0 {
				ch = ch + 1000
			}
			result, fail := h.askClient(context.Background(), tc.plugin, seam.Ask{Channel: ch, Method: tc.method, Params: tc.params})
			switch {
			case tc.wantCode != "":
				if fail == nil || fail.Code != tc.wantCode {
					t.Fatalf("answer %s, %v; want %s", result, fail, tc.wantCode)
				}
			case fail != nil || !json.Valid(result) || !strings.Contains(string(result), tc.want):
				t.Fatalf("answer %s, %v; want a result with %s", result, fail, tc.want)
			}
		})
	}
	// A client that declared neither gets no channel; nor does a closed call.
	ch, done := h.asks.open(h.mcp.WithContext(context.Background(), &askedSession{}), "p")
	done()
	if ch != 0 {
		t.Fatalf("a client without sampling or elicitation got channel %d", ch)
	}
}
