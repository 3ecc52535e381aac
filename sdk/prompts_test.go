package sdk

import (
	"context"
	"errors"
	"testing"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

func TestPrompts(t *testing.T) {
	p := New("demo", "1.0.0")
	p.AddPrompt(Prompt{Name: "b-fixed", Description: "fixed wins",
		Arguments: []PromptArgument{{Name: "phase", Required: true}},
		Render: func(_ context.Context, args map[string]string) (PromptResult, error) {
			return PromptResult{Messages: []PromptMessage{{Role: "user", Text: "phase " + args["phase"]}}}, nil
		}})
	listed := []Prompt{{Name: "b-fixed", Description: "listed loses"}, {Name: "a-listed"}}
	p.ListPromptsWith(func(context.Context) ([]Prompt, error) { return listed, nil })
	ctx := context.Background()
	list, err := p.listPrompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "a-listed" || list[1].Description != "fixed wins" {
		t.Fatalf("Prompts = %+v; want a-listed then the fixed b-fixed", list)
	}
	for _, tc := range []struct {
		name       string
		args       map[string]string
		wantStatus int
		wantField  string
		wantText   string
	}{
		{"b-fixed", map[string]string{"phase": "2"}, 0, "", "phase 2"},
		{"b-fixed", nil, 400, "phase", ""},
		{"b-fixed", map[string]string{"phase": ""}, 400, "phase", ""},
		{"missing", nil, 404, "name", ""},
		{"a-listed", nil, 0, "", ""},
	} {
		res, err := p.getPrompt(ctx, tc.name, tc.args)
		if tc.wantStatus != 0 {
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.wantStatus || e.Details["field"] != tc.wantField {
				t.Errorf("GetPrompt(%s, %v) err = %v; want %d naming %s", tc.name, tc.args, err, tc.wantStatus, tc.wantField)
			}
			continue
		}
		if err != nil {
			t.Errorf("GetPrompt(%s): %v", tc.name, err)
			continue
		}
		if tc.wantText != "" && (len(res.Messages) != 1 || res.Messages[0].Text != tc.wantText) {
			t.Errorf("GetPrompt(%s) = %+v; want %q", tc.name, res, tc.wantText)
		}
	}
	// Over the protocol, a refused render is an error in the response.
	resp, err := (&server{p: p}).GetPrompt(ctx, &pb.GetPromptRequest{Name: "missing"})
	if err != nil || resp.Error == nil || resp.Error.Status != 404 {
		t.Errorf("GetPrompt over the protocol = %v, %v; want a 404 in the response", resp, err)
	}
	lr, err := (&server{p: p}).ListPrompts(ctx, &pb.ListPromptsRequest{})
	if err != nil || len(lr.Prompts) != 2 || !lr.Prompts[1].Arguments[0].Required {
		t.Errorf("ListPrompts over the protocol = %v, %v", lr, err)
	}
}

// A message's content block (image, embedded resource) travels in the
// protocol's PromptMessage.content; a text message in text.
func TestPromptMessageContentOverTheProtocol(t *testing.T) {
	p := New("demo", "1.0.0")
	img, res := ImageContent([]byte{1, 2}, "image/png"), EmbeddedBlob("x://b", "application/octet-stream", []byte{3})
	p.AddPrompt(Prompt{Name: "mixed", Render: func(context.Context, map[string]string) (PromptResult, error) {
		return PromptResult{Messages: []PromptMessage{{Role: "user", Text: "see"}, {Role: "user", Content: &img}, {Role: "assistant", Content: &res}}}, nil
	}})
	resp, err := (&server{p: p}).GetPrompt(context.Background(), &pb.GetPromptRequest{Name: "mixed"})
	if err != nil || resp.Error != nil || len(resp.Messages) != 3 {
		t.Fatalf("GetPrompt = %v, %v", resp, err)
	}
	m := resp.Messages
	if m[0].Text != "see" || m[0].Content != nil {
		t.Errorf("text message = %v", m[0])
	}
	if c := m[1].Content; c == nil || c.Type != "image" || c.MimeType != "image/png" || len(c.Data) != 2 {
		t.Errorf("image message = %v", m[1])
	}
	if c := m[2].Content; m[2].Role != "assistant" || c == nil || c.Type != "resource" || c.Uri != "x://b" || string(c.Data) != "\x03" {
		t.Errorf("embedded blob message = %v", m[2])
	}
}
