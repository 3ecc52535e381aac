package computer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
)

const testKey = "sk-agent-test"

func betaClient(t *testing.T) (*BetaClient, *visiontest.API) {
	api := visiontest.New(t, testKey)
	return NewBetaClient(imaging.Config{APIKey: testKey, BaseURL: api.URL, Model: "test-model", MaxRetries: 1, RequestTimeout: 10 * time.Second}, ToolVersion{}), api
}

func move(id string, x, y int) visiontest.ToolUse {
	return visiontest.ToolUse{ID: id, Input: map[string]any{"action": "mouse_move", "coordinate": []any{x, y}}}
}

func TestAgentLoopDrivesTheScreen(t *testing.T) {
	d, win := startX(t)
	bc, api := betaClient(t)
	if !bc.IsBetaAPIAvailable(context.Background()) {
		t.Fatal("the fake API should be available")
	}
	s, err := NewSession(SessionConfig{}, d, WithBetaCheck(bc.CheckAvailable))
	if err != nil {
		t.Fatal(err)
	}
	start, err := s.Start(context.Background())
	if err != nil || start.BetaAvailable == nil || !*start.BetaAvailable {
		t.Fatalf("start %+v %v", start, err)
	}
	api.Push(
		visiontest.ToolUseReply("Let me look.", visiontest.ToolUse{ID: "t1", Input: map[string]any{"action": "screenshot"}}),
		visiontest.ToolUseReply("", move("t2", 200, 300)),
		visiontest.ToolUseReply("", visiontest.ToolUse{ID: "t3", Input: map[string]any{"action": "left_click"}}, visiontest.ToolUse{ID: "t4", Input: map[string]any{"action": "type", "text": "hi"}}),
		visiontest.ToolUseReply("", visiontest.ToolUse{ID: "t5", Input: map[string]any{"action": "cursor_position"}}, visiontest.ToolUse{ID: "t6", Input: map[string]any{"action": "key"}}),
		visiontest.TextReply("Done: clicked and typed."),
	)
	var turns []int
	res, err := bc.RunAgent(context.Background(), s, AgentOptions{Task: "Click at 200,300 and type hi", Progress: func(turn int, _ string) { turns = append(turns, turn) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" || res.Turns != 5 || res.ActionsExecuted != 4 || res.ActionsRefused != 2 || res.FinalText != "Done: clicked and typed." || !res.Success {
		t.Fatalf("result %+v", res)
	}
	if x, y := win.pointer(); x != 200 || y != 300 {
		t.Fatalf("pointer at %d,%d", x, y)
	}
	if ev := win.buttonPresses(1)[0]; ev.Detail != 1 || ev.EventX != 200 || ev.EventY != 300 {
		t.Fatalf("click %+v", ev)
	}
	if got := win.typedText(2); got != "hi" {
		t.Fatalf("typed %q", got)
	}

	reqs := api.MessageRequests()
	if len(reqs) != 5 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("X-Api-Key") != testKey || !strings.Contains(r.Header.Get("Anthropic-Beta"), "computer-use-2025-11-24") {
			t.Fatalf("headers %v", r.Header)
		}
		tools := r.Body["tools"].([]any)
		def := tools[0].(map[string]any)
		if len(tools) != 1 || def["type"] != "computer_20251124" || def["enable_zoom"] != true || def["name"] != "computer" || def["display_width_px"] != float64(screenW) || def["display_height_px"] != float64(screenH) {
			t.Fatalf("tool definition %v", tools)
		}
	}
	// The screenshot went back as an image tool result.
	msgs := reqs[1].Body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	tr := last["content"].([]any)[0].(map[string]any)
	img := tr["content"].([]any)[0].(map[string]any)
	if last["role"] != "user" || tr["type"] != "tool_result" || tr["tool_use_id"] != "t1" || img["type"] != "image" || img["source"].(map[string]any)["media_type"] != "image/png" {
		t.Fatalf("screenshot tool result %v", tr)
	}
	// cursor_position answered from tracking; the key without text was refused.
	msgs = reqs[4].Body["messages"].([]any)
	results := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	if txt := results[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; txt != "X=200,Y=300" {
		t.Fatalf("cursor_position answered %v", txt)
	}
	if bad := results[1].(map[string]any); bad["is_error"] != true {
		t.Fatalf("invalid key request not marked as error: %v", bad)
	}
	if len(turns) == 0 {
		t.Fatal("no progress reported")
	}
}

func TestAgentLoopStopsAtTheLimit(t *testing.T) {
	d, _ := startX(t)
	bc, api := betaClient(t)
	f := false
	s, err := NewSession(SessionConfig{MaxActions: 3, CaptureScreenshots: &f}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A model that never stops: two moves per turn.
	n := 0
	api.Fallback = func(visiontest.Request) visiontest.Reply {
		n += 2
		return visiontest.ToolUseReply("", move("a", n, n), move("b", n+1, n+1))
	}
	res, err := bc.RunAgent(context.Background(), s, AgentOptions{Task: "wander"})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopLimit || !strings.Contains(res.LimitReason, "maxActions") || res.ActionsExecuted != 3 || s.GetSummary().ActionCount != 3 {
		t.Fatalf("result %+v", res)
	}
	if calls := len(api.MessageRequests()); calls != 2 {
		t.Fatalf("%d model calls; the loop must stop as soon as the limit refuses an action", calls)
	}

	// maxTurns bounds the calls when no limit is reached.
	s2, _ := NewSession(SessionConfig{CaptureScreenshots: &f}, d)
	_, _ = s2.Start(context.Background())
	before := len(api.MessageRequests())
	res, err = bc.RunAgent(context.Background(), s2, AgentOptions{Task: "wander", MaxTurns: 2})
	if err != nil || res.StopReason != StopMaxTurns || len(api.MessageRequests())-before != 2 {
		t.Fatalf("max turns: %+v %v", res, err)
	}
}

func TestAgentErrors(t *testing.T) {
	d, _ := startX(t)
	f := false
	s, _ := NewSession(SessionConfig{CaptureScreenshots: &f}, d)
	noKey := NewBetaClient(imaging.Config{}, ToolVersion{})
	if noKey.IsBetaAPIAvailable(context.Background()) {
		t.Fatal("available without a key")
	}
	if _, err := noKey.RunAgent(context.Background(), s, AgentOptions{Task: "x"}); code(err) != "ERR_NOT_CONFIGURED" {
		t.Fatalf("no key: %v", err)
	}
	bc, api := betaClient(t)
	if _, err := bc.RunAgent(context.Background(), s, AgentOptions{Task: "x"}); code(err) != "ERR_INVALID_TRANSITION" {
		t.Fatalf("idle session: %v", err)
	}
	_, _ = s.Start(context.Background())
	for _, o := range []AgentOptions{{Task: " "}, {Task: "x", MaxTurns: MaxTurnsCeiling + 1}} {
		if _, err := bc.RunAgent(context.Background(), s, o); code(err) != "ERR_INVALID_INPUT" {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	api.Push(visiontest.ErrorReply(400, "invalid_request_error", "bad tool"))
	if _, err := bc.RunAgent(context.Background(), s, AgentOptions{Task: "x"}); code(err) != "ERR_UPSTREAM_FAILED" {
		t.Fatalf("upstream 400: %v", err)
	}
	// A newer tool version travels as one pair.
	api2 := visiontest.New(t, testKey)
	v2 := ToolVersion{ToolType: "computer_20250124", Beta: "computer-use-2025-01-24"}
	nb := NewBetaClient(imaging.Config{APIKey: testKey, BaseURL: api2.URL}, v2)
	api2.Push(visiontest.TextReply("nothing to do"))
	if _, err := nb.RunAgent(context.Background(), s, AgentOptions{Task: "x"}); err != nil {
		t.Fatal(err)
	}
	r := api2.MessageRequests()[0]
	if r.Body["tools"].([]any)[0].(map[string]any)["type"] != "computer_20250124" || !strings.Contains(r.Header.Get("Anthropic-Beta"), "computer-use-2025-01-24") {
		t.Fatalf("tool pair not used: %v %v", r.Body["tools"], r.Header)
	}
}
