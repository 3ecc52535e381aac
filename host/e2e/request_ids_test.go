package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSecondRequestWithAnIDInFlightIsRefused: two tools/call requests with
// one id, the first slow: the second is refused at once with -32600 naming
// the id, the first gets its own result, and nothing else answers the id;
// once answered, the id is free again (docs/decisions.md D42). Through the
// relay and the daemon, and with --no-daemon. Before, the relay gave one
// answer for the two (the second never ran) and --no-daemon gave both the
// first call's answer.
func TestSecondRequestWithAnIDInFlightIsRefused(t *testing.T) {
	for _, mode := range [][]string{sharedEnv, {"CAIRN_DAEMON=off"}} {
		t.Run(mode[0], func(t *testing.T) {
			w := newWorkspace(t)
			w.addPlugin("testkit", testkitBin)
			r := startRaw(t, w, mode...)
			r.initialize()
			call := func(name string, args map[string]any) []byte {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
					"params": map[string]any{"name": name, "arguments": args}})
				return append(b, '\n')
			}
			// One write: the second line is read right after the first,
			// whose call then runs for seconds.
			const sleepMs = 4000
			both := append(call("testkit_sleep", map[string]any{"ms": sleepMs}), call("testkit_echo", map[string]any{"message": "second"})...)
			if _, err := r.in.Write(both); err != nil {
				t.Fatal(err)
			}
			var answers []map[string]any
			for len(answers) < 2 {
				answers = append(answers, r.next(60*time.Second, "the answers for id 7", idIs(7)))
			}
			refusal, result := answers[0], answers[1]
			e, _ := refusal["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e == nil || e["code"] != float64(-32600) || !strings.Contains(msg, "request id 7 is already in flight in this session; use a new id") {
				t.Fatalf("the first answer for id 7 is not the second request's -32600 refusal naming the id: %v", refusal)
			}
			res, _ := result["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			if slept, _ := sc["slept_ms"].(float64); res == nil || res["isError"] == true || slept < sleepMs {
				t.Fatalf("the second answer for id 7 is not the slow first call's result: %v", result)
			}
			// Nothing else answers id 7: the ping's answer comes after
			// whatever the session had left to say about it.
			r.send(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "ping"})
			r.next(30*time.Second, "the ping's answer", func(m map[string]any) bool {
				if idIs(7)(m) {
					t.Fatalf("a third answer for id 7: %v", m)
				}
				return idIs(8)(m)
			})
			// Answered, so free again.
			r.send(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "ping"})
			if m := r.next(30*time.Second, "the reused id's answer", idIs(7)); m["error"] != nil {
				t.Fatalf("id 7 reused after its answer was refused: %v", m)
			}
		})
	}
}
