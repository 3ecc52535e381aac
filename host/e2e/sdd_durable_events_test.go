package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// TestSddEventSurvivesKilledPlugin: an sdd write's event outlives the death
// of the sdd plugin between the write and the event's handling,
// and the next start delivers it to a subscribed webhook exactly once,
// under the id it was recorded with.
//
// The admin plugin is stopped (SIGSTOP) before the write, so its handler
// cannot take the event and the host cannot acknowledge it: the event is
// deterministically pending when the sdd plugin, then the whole server,
// are SIGKILLed. Only the restarted server's sdd drainer can deliver it.
func TestSddEventSurvivesKilledPlugin(t *testing.T) {
	w := newWorkspace(t)
	recv := newHookReceiver(t)
	env := []string{"CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_ENV=development", "CAIRN_AGENT_ID=ops-agent"}
	s := w.serve(env...)
	reg := okCall(t, s, "admin_webhook_register", map[string]any{"url": recv.srv.URL + "/hook", "event_types": []string{"sdd.lease.issued"}})
	recv.mu.Lock()
	recv.secret = reg["webhook"].(map[string]any)["secret"].(string)
	recv.mu.Unlock()
	adminPID := int(pluginHealth(t, s, "admin")["pid"].(float64))
	sddPID := int(pluginHealth(t, s, "sdd")["pid"].(float64))

	if err := syscall.Kill(adminPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(adminPID, syscall.SIGCONT) })
	lease := okCall(t, s, "sdd_lease", map[string]any{"action": "issue", "taskId": "T-durable"})["lease"].(map[string]any)
	// server_health shows the backlog an operator would look for: the sdd
	// plugin's own details, passed on by the host.
	sddDetails, _ := pluginHealth(t, s, "sdd")["details"].(map[string]any)
	if q, _ := sddDetails["sdd"].(map[string]any); q["pending_events"] != float64(1) || q["events_shed"] != float64(0) {
		t.Fatalf("server_health shows sdd details %v, want pending_events 1 and events_shed 0", sddDetails)
	}
	pendingID := ""
	if !suiteOnPostgres {
		pending := pendingEvents(t, w)
		if len(pending) != 1 || pending[0]["type"] != "sdd.lease.issued" {
			t.Fatalf("state holds %v pending events, want the one sdd.lease.issued", pending)
		}
		pendingID = pending[0]["id"].(string)
	}
	for _, pid := range []int{sddPID, s.cmd.Process.Pid} {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, patience, "the killed server's plugins to be gone", func() bool {
		return !processAlive(adminPID) && !processAlive(sddPID)
	})
	s.close()
	recv.mu.Lock()
	early := len(recv.events)
	recv.mu.Unlock()
	if early != 0 {
		t.Fatalf("the webhook got %d events while the admin plugin was stopped", early)
	}

	s2 := w.serve(env...)
	eventually(t, 30*time.Second, "the restarted server to deliver the pending event", func() bool {
		return recv.got("sdd.lease.issued") != nil
	})
	// Later redeliveries (none are expected) would arrive within the
	// drainer's retry pauses; give them time to show.
	time.Sleep(3 * time.Second)
	recv.mu.Lock()
	events, bad := append([]map[string]any(nil), recv.events...), recv.bad
	recv.mu.Unlock()
	if len(events) != 1 || bad != 0 {
		t.Fatalf("the webhook got %d events (%d bad signatures), want exactly 1: %v", len(events), bad, events)
	}
	ev := events[0]
	if data, _ := ev["data"].(map[string]any); data["leaseId"] != lease["leaseId"] || data["taskId"] != "T-durable" {
		t.Fatalf("delivered %v, want the lease %v", ev, lease["leaseId"])
	}
	if pendingID != "" && ev["id"] != pendingID {
		t.Fatalf("delivered under id %v, recorded as %s", ev["id"], pendingID)
	}
	if !suiteOnPostgres {
		eventually(t, patience, "the delivered event to leave the sdd state", func() bool {
			return len(pendingEvents(t, w)) == 0
		})
	}
	// Live events keep flowing after the restart, each under an id of its
	// own.
	next := okCall(t, s2, "sdd_lease", map[string]any{"action": "issue", "taskId": "T-after"})["lease"].(map[string]any)
	eventually(t, patience, "the next lease's event at the webhook", func() bool {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		return len(recv.events) >= 2
	})
	recv.mu.Lock()
	second := recv.events[1]
	recv.mu.Unlock()
	if data, _ := second["data"].(map[string]any); data["leaseId"] != next["leaseId"] || second["id"] == ev["id"] {
		t.Fatalf("second delivery %v, want lease %v under a new id", second, next["leaseId"])
	}
}

// TestSddEventSurvivesKilledPluginOnPostgres is the same with the state in
// PostgreSQL, where the restarted server drains what it finds once the
// event has waited its grace (another live server might still hold it).
func TestSddEventSurvivesKilledPluginOnPostgres(t *testing.T) {
	if _, err := pgtest.Binaries(); err != nil {
		t.Skip(err)
	}
	suiteOnPostgres = true
	defer func() { suiteOnPostgres = false }()
	TestSddEventSurvivesKilledPlugin(t)
}

// pendingEvents reads the events waiting in the sdd state file.
func pendingEvents(t *testing.T, w *workspace) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.dataDir(), "state", "sdd-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pending []map[string]any `json:"pendingEvents"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Pending
}
