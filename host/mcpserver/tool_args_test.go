package mcpserver

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
)

// A tools/call's arguments are taken out raw, once; a message whose shape
// encoding/json could read otherwise is left for mcp-go.
func TestToolArgumentsAreLiftedRaw(t *testing.T) {
	h := newMinimalServer(t)
	lifted := []struct{ msg, args, rest string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,"}"]}}}`,
			`{"a":[1,"}"]}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`},
		{`{"params" : { "arguments" : "s\"" , "name" : "x" , "_meta":{"arguments":1} }, "method":"tools/call","id":"a"}`,
			`"s\""`, `{"params" : { "arguments" : {} , "name" : "x" , "_meta":{"arguments":1} }, "method":"tools/call","id":"a"}`},
	}
	for _, c := range lifted {
		ctx, rest := h.liftToolArguments(context.Background(), "tools/call", []byte(c.msg))
		args, ok := liftedArguments(ctx)
		if !ok || string(args) != c.args || string(rest) != c.rest {
			t.Errorf("%s: lifted %q (%v), left %s", c.msg, args, ok, rest)
		}
		if _, again := liftedArguments(ctx); again {
			t.Errorf("%s: the arguments were handed out twice", c.msg)
		}
	}
	kept := []string{
		`{"method":"tools/call","params":{"name":"x","\u0061rguments":{"a":1}}}`,
		`{"method":"tools/call","params":{"name":"x","Arguments":{"a":1}}}`,
		`{"method":"tools/call","params":{"name":"x","arguments":{"a":1},"arguments":{}}}`,
		`{"method":"tools/call","params":{"name":"x"}}`,
		`{"method":"tools/call","params":[]}`,
		`{"method":"tools/call","Params":{"name":"x","arguments":{}}}`,
	}
	for _, msg := range kept {
		ctx, rest := h.liftToolArguments(context.Background(), "tools/call", []byte(msg))
		if _, ok := liftedArguments(ctx); ok || string(rest) != msg {
			t.Errorf("%s: lifted, leaving %s", msg, rest)
		}
	}
	ctx, _ := h.liftToolArguments(context.Background(), "prompts/get", []byte(`{"params":{"name":"x","arguments":{}}}`))
	if _, ok := liftedArguments(ctx); ok {
		t.Error("a prompts/get's arguments were lifted")
	}
}

// liftProbed, on a message jsonrpc.ProbeMessage scanned, lifts exactly what
// liftToolArguments lifts.
func TestLiftProbedMatchesLiftToolArguments(t *testing.T) {
	h := newMinimalServer(t)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,"}"]}}}`,
		`{"params" : { "arguments" : "s\"" , "name" : "x" , "_meta":{"arguments":1} }, "method":"tools/call","id":"a"}`,
		`{"id":1,"method":"tools/call","params":{"name":"x","\u0061rguments":{"a":1}}}`,
		`{"id":1,"method":"tools/call","params":{"name":"x","Arguments":{"a":1}}}`,
		`{"id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1},"arguments":{}}}`,
		`{"id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"id":1,"method":"tools/call","params":{"arguments":{}}}`,
		`{"id":1,"method":"tools/call","params":{"name":null,"arguments":{}}}`,
		`{"id":1,"method":"tools/call","params":{"name":"\u0078","arguments":{}}}`,
		`{"id":1,"method":"tools/call","params":[]}`,
		`{"id":1,"method":"tools/call","Params":{"name":"x","arguments":{}}}`,
		`{"id":1,"method":"prompts/get","params":{"name":"x","arguments":{}}}`,
	} {
		p, _, handled := jsonrpc.ProbeMessage([]byte(msg))
		if handled {
			continue
		}
		wctx, want := h.liftToolArguments(context.Background(), p.Method, []byte(msg))
		gctx, got := h.liftProbed(context.Background(), p, []byte(msg))
		wargs, wok := liftedArguments(wctx)
		gargs, gok := liftedArguments(gctx)
		if string(got) != string(want) || string(gargs) != string(wargs) || gok != wok {
			t.Errorf("%s: lifted %q (%v) leaving %s; liftToolArguments lifted %q (%v) leaving %s", msg, gargs, gok, got, wargs, wok, want)
		}
	}
}
