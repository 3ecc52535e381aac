package stdio

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// A response line reaches the request waiting for its id and no other;
// anything else a client sends is dropped.
func TestConnRequestsRouteResponses(t *testing.T) {
	t.Parallel()
	var r connRequests
	sent := make(chan map[string]any, 1)
	r.send = func(v any) bool { sent <- v.(map[string]any); return true }
	done := make(chan error, 1)
	var got json.RawMessage
	go func() {
		var err error
		got, err = r.ask(context.Background(), "sampling/createMessage", map[string]any{"maxTokens": 1})
		done <- err
	}()
	req := <-sent
	id, _ := req["id"].(string)
	if id == "" || req["method"] != "sampling/createMessage" {
		t.Fatalf("request %v", req)
	}
	if r.deliver([]byte(`{"jsonrpc":"2.0","id":"someone-else","result":{}}`)) || r.deliver([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)) {
		t.Fatal("a response for another id was delivered")
	}
	if !r.deliver([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"model":"m"}}`)) {
		t.Fatal("the awaited response was not delivered")
	}
	if err := <-done; err != nil || string(got) != `{"model":"m"}` {
		t.Fatalf("ask = %s, %v", got, err)
	}
	if r.deliver([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{}}`)) {
		t.Fatal("a second response to an answered request was delivered")
	}

	// A refusal is an error; an ended wait gives up.
	go func() {
		_, err := r.ask(context.Background(), "elicitation/create", map[string]any{})
		done <- err
	}()
	req = <-sent
	r.deliver([]byte(`{"jsonrpc":"2.0","id":"` + req["id"].(string) + `","error":{"code":-1,"message":"user declined to be asked"}}`))
	if err := <-done; err == nil {
		t.Fatal("a client's error answer was a result")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	go func() { <-sent }()
	if _, err := r.ask(ctx, "elicitation/create", map[string]any{}); err == nil {
		t.Fatal("an unanswered request returned without error after its context ended")
	}
}

func FuzzConnResponseDelivery(f *testing.F) {
	for _, s := range []string{`{"id":"cairn-1","result":{}}`, `{"id":"cairn-1","error":{"code":1}}`, `{"id":1}`, `[]`, `{"id":"cairn-1"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r := connRequests{pending: map[string]chan connResponse{"cairn-1": make(chan connResponse, 1)}}
		ch := r.pending["cairn-1"]
		if r.deliver(line) && len(ch) != 1 {
			t.Fatalf("delivered %s but the waiter got nothing", line)
		}
	})
}
