package ui

// The spec-driven page: phase, leases, spawn queue and history, skill
// matrix.

import (
	"net/http"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// QueueShown and HistoryShown bound the sdd page's spawn tables.
const (
	QueueShown   = 50
	HistoryShown = 20
)

// sddView is the spec-driven page: the sdd area's dashboard, spawn queue
// and history, and skill matrix, each with the error that kept it away.
type sddView struct {
	Dash       sddDashboard
	DashErr    *errs.Error
	Queue      []spawnQueueItem
	QueueTotal int
	QueueErr   *errs.Error
	History    []spawnHistoryEvent
	HistoryErr *errs.Error
	Matrix     skillMatrix
	MatrixErr  *errs.Error
}

func (s *Server) sddData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := sddView{}
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() {
		var out struct {
			Dashboard sddDashboard `json:"dashboard"`
		}
		v.DashErr = s.call(ctx, g, "sdd_dash", map[string]any{"format": "json"}, &out)
		v.Dash = out.Dashboard
	})
	run(func() {
		var out struct {
			Items []spawnQueueItem `json:"items"`
		}
		v.QueueErr = s.callReadAction(ctx, g, "sdd_agent", map[string]any{"action": "queue"}, &out)
		v.QueueTotal = len(out.Items)
		v.Queue = out.Items[:min(len(out.Items), QueueShown)]
	})
	run(func() {
		var out struct {
			Events []spawnHistoryEvent `json:"events"`
		}
		v.HistoryErr = s.callReadAction(ctx, g, "sdd_agent", map[string]any{"action": "history", "limit": HistoryShown}, &out)
		v.History = out.Events
	})
	run(func() {
		v.MatrixErr = s.callReadAction(ctx, g, "sdd_skill", map[string]any{"action": "list"}, &v.Matrix)
	})
	wg.Wait()
	return v, nil
}
