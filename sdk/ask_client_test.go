package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestSampleAndElicitSpeakMCP(t *testing.T) {
	var asked []string
	ctx := WithClientAsker(context.Background(), func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method+" "+string(params))
		if method == "sampling/createMessage" {
			return json.RawMessage(`{"role":"assistant","content":{"type":"image","data":"AQI=","mimeType":"image/png"},"model":"m","stopReason":"endTurn"}`), nil
		}
		return json.RawMessage(`{"action":"accept","content":{"n":"x"}}`), nil
	})
	temp := 0.5
	res, err := Sample(ctx, SampleRequest{Messages: []SamplingMessage{{Role: "user", Content: TextContent("hi")}}, SystemPrompt: "be brief", Temperature: &temp, ModelHints: []string{"claude"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "m" || res.StopReason != "endTurn" || res.Content.Type != "image" || string(res.Content.Data) != "\x01\x02" {
		t.Fatalf("Sample = %+v", res)
	}
	want := `sampling/createMessage {"maxTokens":1024,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"modelPreferences":{"hints":[{"name":"claude"}]},"systemPrompt":"be brief","temperature":0.5}`
	if asked[0] != want {
		t.Fatalf("asked %s\nwant  %s", asked[0], want)
	}
	el, err := Elicit(ctx, ElicitRequest{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil || el.Action != "accept" || el.Content["n"] != "x" {
		t.Fatalf("Elicit = %+v, %v", el, err)
	}
	if asked[1] != `elicitation/create {"message":"name?","requestedSchema":{"type":"object"}}` {
		t.Fatalf("asked %s", asked[1])
	}
	if _, err := Elicit(ctx, ElicitRequest{Message: "no schema"}); err == nil {
		t.Fatal("an elicitation without a schema was sent")
	}

	// No asker: the call's client cannot be asked.
	_, err = Sample(context.Background(), SampleRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Code != "ERR_CLIENT_UNSUPPORTED" || e.Status != 501 {
		t.Fatalf("Sample without a client = %v; want 501 ERR_CLIENT_UNSUPPORTED", err)
	}
	// A client's answer that is not MCP's shape is an upstream failure.
	bad := WithClientAsker(context.Background(), func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":{"type":"video"}}`), nil
	})
	if _, err := Sample(bad, SampleRequest{}); !errors.As(err, &e) || e.Code != "ERR_UPSTREAM_FAILED" {
		t.Fatalf("Sample with a bad answer = %v", err)
	}
}

// A client's sampling answer is parsed from untrusted JSON: any input is
// either a text, image or audio block or an error, never a panic.
func FuzzBlockFromMCP(f *testing.F) {
	for _, s := range []string{`{"type":"text","text":"hi"}`, `{"type":"image","data":"AQI=","mimeType":"image/png"}`, `{"type":"audio","data":"!!"}`, `{"type":"video"}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := blockFromMCP(raw)
		if err == nil && c.Type != "text" && c.Type != "image" && c.Type != "audio" {
			t.Fatalf("accepted a %q block from %s", c.Type, raw)
		}
	})
}
