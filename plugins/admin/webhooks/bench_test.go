package webhooks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkDeliver: one signed delivery to a loopback receiver, recorded in
// the history (one durable commit).
func BenchmarkDeliver(b *testing.B) { pgtest.EachStore(b, benchmarkDeliver) }

func benchmarkDeliver(b *testing.B) {
	m := devManager(b, openStore(b, b.TempDir()))
	srv := benchServer(b)
	res, _ := m.Register(context.Background(), RegisterOptions{URL: srv.URL})
	w, _ := m.GetWebhook(res.Webhook.ID)
	ev := store.Event{ID: "evt_b", Type: "task.created", Time: "2026-11-22T00:00:00.000Z", Data: json.RawMessage(`{"task_id":"T-1","title":"benchmark"}`)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := m.Deliver(context.Background(), w, ev); err != nil || !r.Success {
			b.Fatal(r, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkTriggerEvent: the persisted path — queue, claim, attempt and
// record for 4 subscribed webhooks per event (commits are shared per step).
func BenchmarkTriggerEvent(b *testing.B) { pgtest.EachStore(b, benchmarkTriggerEvent) }

func benchmarkTriggerEvent(b *testing.B) {
	m := devManager(b, openStore(b, b.TempDir()))
	srv := benchServer(b)
	for i := 0; i < 4; i++ {
		if _, err := m.Register(context.Background(), RegisterOptions{URL: srv.URL, EventTypes: []string{"task.*"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := m.TriggerEvent(context.Background(), "task.created", map[string]any{"n": i}); err != nil || r.Delivered != 4 {
			b.Fatal(r, err)
		}
	}
	b.ReportMetric(float64(4*b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
