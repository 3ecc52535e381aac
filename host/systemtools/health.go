package systemtools

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/supervisor"
)

// Health gathers the health report, asking every running plugin in
// parallel. Mode, toolsets and the tool count are the calling session's.
func (t *Tools) Health(ctx context.Context) HealthOutput {
	sess := t.catalog.SessionOf(ctx)
	visible := 0
	for _, tool := range t.catalog.All() {
		if clientsession.Visible(sess, tool) {
			visible++
		}
	}
	out := HealthOutput{
		Status: "ok", Mode: sess.Mode, UptimeMs: time.Since(t.started).Milliseconds(),
		Middleware: MiddlewareInfo{Stages: t.pipe.Stages()},
		Tools:      ToolsInfo{Registered: visible},
		Version:    t.version, Timestamp: Timestamp(time.Now()),
		Plugins: []PluginHealth{}, Problems: []string{}, Toolsets: []string{},
	}
	for _, ts := range config.BuiltinToolsets {
		if sess.Serves(ts) {
			out.Toolsets = append(out.Toolsets, ts)
		}
	}
	if own := clientsession.From(ctx, nil); own != nil {
		// What is wrong in the calling session's own settings (a
		// CAIRN_TOOLSETS with nothing valid serves the system tools only,
		// docs/decisions.md D42): the agent that can call little else
		// learns why here.
		for _, w := range own.Warnings {
			out.Problems = append(out.Problems, "this session: "+w)
		}
	}
	out.Calls, _ = t.metrics.Snapshot()
	out.Events.Published, out.Events.Dropped, out.Events.Subscribers = t.bus.Stats()
	if c := t.bus.Cluster(); c != nil {
		st := c.Stats()
		out.Cluster = &st
		if !st.Connected {
			out.Problems = append(out.Problems, "cluster: not following the other servers' events: "+st.LastError)
		}
	}

	plugins := t.fleet.Processes()
	lines := make([]PluginHealth, len(plugins))
	details := make([]map[string]json.RawMessage, len(plugins))
	var wg sync.WaitGroup
	for i, p := range plugins {
		wg.Add(1)
		go func(i int, p *supervisor.Process) {
			defer wg.Done()
			st := p.Status()
			line := PluginHealth{Name: st.Name, Version: st.Version, Source: st.Source, State: string(st.State), Restarts: st.Restarts, Tools: st.Tools, PID: st.PID, SHA256: st.SHA256, Status: "degraded", Message: st.LastError, LastExit: st.LastExit, NextAttempt: st.NextAttempt}
			// An opening plugin answers too: its health names the step
			// it is on (docs/decisions.md D34).
			if st.State.Started() {
				if hr, err := p.Health(ctx); err != nil {
					line.Message = "health check failed: " + err.Error()
				} else {
					line.Status, line.Message = hr.Status, hr.Message
					if len(hr.Details) > 0 {
						var d map[string]json.RawMessage
						if json.Unmarshal(hr.Details, &d) == nil {
							details[i] = d
						}
					}
				}
			}
			lines[i] = line
		}(i, p)
	}
	wg.Wait()
	out.Plugins = lines
	for i, l := range lines {
		if l.Status != "ok" {
			out.Status = "degraded"
		}
		d := details[i]
		for k, v := range d {
			if k == "problems" {
				continue
			}
			if out.Plugins[i].Details == nil {
				out.Plugins[i].Details = map[string]json.RawMessage{}
			}
			out.Plugins[i].Details[k] = v
		}
		if raw, ok := d["db"]; ok && !out.DB.Open {
			_ = json.Unmarshal(raw, &out.DB)
		}
		if raw, ok := d["problems"]; ok {
			var probs []string
			if json.Unmarshal(raw, &probs) == nil {
				for _, pr := range probs {
					out.Problems = append(out.Problems, l.Name+": "+pr)
				}
			}
		}
	}
	if u := t.fleet.Untrusted(); len(u) > 0 {
		out.Untrusted = u
		out.Status = "degraded"
		for _, p := range u {
			out.Problems = append(out.Problems, p.Name+": not started, not trusted: "+p.Reason+"; to run it: "+p.Command)
		}
	}
	for name, msg := range t.fleet.Problems() {
		out.Problems = append(out.Problems, name+": "+msg)
		out.Status = "degraded"
	}
	sort.Strings(out.Problems)
	if len(out.Problems) > 0 {
		out.Status = "degraded"
	}
	return out
}
