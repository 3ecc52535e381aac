package e2e

import (
	"fmt"
	"testing"
)

// A paused webhook holds the bus events it subscribes to — in the admin
// store, so a restarted cairn still has them — and gets them, in order, on
// resume (pause once dropped them).
func TestAdminPausedWebhookHoldsEventsAcrossRestart(t *testing.T) {
	w := newWorkspace(t)
	recv := newHookReceiver(t)
	env := []string{"CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_ENV=development", "CAIRN_AGENT_ID=ops-agent"}
	s := w.serve(env...)
	reg := okCall(t, s, "admin_webhook_register", map[string]any{"url": recv.srv.URL + "/hook", "event_types": []string{"task.created"}})
	hook := reg["webhook"].(map[string]any)
	recv.mu.Lock()
	recv.secret = hook["secret"].(string)
	recv.mu.Unlock()
	okCall(t, s, "admin_webhook_pause", map[string]any{"webhook_id": hook["id"]})

	ws := okCall(t, s, "admin_workspace_create", map[string]any{"name": "Hold"})
	okCall(t, s, "admin_project_create", map[string]any{"workspace_id": ws["id"], "name": "Held Events"})
	eventually(t, patience, "task_create to accept the workspace project", func() bool {
		return !s.call("task_create", map[string]any{"title": "held 1", "project": "held-events"}).IsError
	})
	const n = 4
	for i := 2; i <= n; i++ {
		okCall(t, s, "task_create", map[string]any{"title": fmt.Sprintf("held %d", i), "project": "held-events"})
	}
	eventually(t, patience, "the paused webhook to hold every task.created", func() bool {
		h := okCall(t, s, "admin_webhook_deliveries", map[string]any{"webhook_id": hook["id"], "status": "held"})
		return h["count"].(float64) == n
	})
	recv.mu.Lock()
	early := len(recv.events)
	recv.mu.Unlock()
	if early != 0 {
		t.Fatalf("a paused webhook received %d events", early)
	}
	s.close()

	s2 := w.serve(env...)
	okCall(t, s2, "admin_webhook_resume", map[string]any{"webhook_id": hook["id"]})
	eventually(t, patience, "the held events at the receiver after resume", func() bool {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		return len(recv.events) >= n
	})
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.events) != n || recv.bad != 0 {
		t.Fatalf("received %d events (%d bad signatures)", len(recv.events), recv.bad)
	}
	for i, ev := range recv.events {
		data := ev["data"].(map[string]any)
		if ev["type"] != "task.created" || data["title"] != fmt.Sprintf("held %d", i+1) {
			t.Fatalf("event %d: %v (want held %d, in order)", i, ev, i+1)
		}
	}
}
