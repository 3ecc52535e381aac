package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// D11: invalid UTF-8 (raw bytes or a lone surrogate escape) in any string
// field of task_create or thought_record is refused with 400 naming the
// field, before JSON decoding could replace it with U+FFFD. Sent as raw
// lines, through the relay and with --no-daemon.
func TestInvalidUTF8IsRefusedNamingTheField(t *testing.T) {
	bads := map[string]string{"raw byte 0xff": "bad\xffbyte", "lone surrogate": `bad\ud800surrogate`}
	for _, mode := range [][]string{sharedEnv, {"CAIRN_DAEMON=off"}} {
		t.Run(mode[0], func(t *testing.T) {
			w := newWorkspace(t)
			r := startRaw(t, w, append(mode, "CAIRN_PROJECT=web")...)
			r.initialize()
			r.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "task_create", "arguments": map[string]any{"title": "ok", "project": "web"}}})
			created := r.next(30*time.Second, "task_create", idIs(1))
			taskID := fmt.Sprint(created["result"].(map[string]any)["structuredContent"].(map[string]any)["task_id"])
			cases := []struct{ tool, field, args string }{
				{"task_create", "title", `{"title":%s,"project":"web"}`},
				{"task_create", "description", `{"title":"t","project":"web","description":%s}`},
				{"task_create", "labels", `{"title":"t","project":"web","labels":[%s]}`},
				{"thought_record", "content", `{"task_id":"` + taskID + `","type":"decision","content":%s}`},
				{"thought_record", "task_id", `{"task_id":%s,"type":"decision","content":"c"}`},
			}
			id := 100
			for _, c := range cases {
				for what, bad := range bads {
					id++
					line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":`+c.args+`}}`+"\n", id, c.tool, `"`+bad+`"`)
					if _, err := r.in.Write([]byte(line)); err != nil {
						t.Fatal(err)
					}
					m := r.next(30*time.Second, c.tool+" "+c.field, idIs(float64(id)))
					res, _ := m["result"].(map[string]any)
					sc, _ := res["structuredContent"].(map[string]any)
					e, _ := sc["error"].(map[string]any)
					meta, _ := res["_meta"].(map[string]any)
					details, _ := e["details"].(map[string]any)
					if res["isError"] != true || fmt.Sprint(meta["status"]) != "400" || !strings.HasPrefix(fmt.Sprint(details["field"]), c.field) {
						t.Errorf("%s %s with a %s: %v, want 400 naming the field", c.tool, c.field, what, m)
					}
				}
			}
		})
	}
}
