package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// A plugin that opens slowly is waited for, not failed (docs/decisions.md
// D34). A start is bounded (Env.StartTimeout: handshake, Configure,
// Describe), but some work cannot be: completing an interrupted import of
// 100,000 tasks, or writing the index entries a killed process left
// pending. A plugin does such work after it has answered Configure, and
// its Health says "opening" (seam.HealthOpening) meanwhile, with the
// step it is on. The supervisor then keeps the plugin in StateOpening: its
// tools are registered, so sessions start and list them; its calls, events
// and resource reads wait for the open, up to Env.OpenWait; `cairn status`
// shows the step. When Health says anything else the plugin runs.

// DefaultOpenWait is how long a call waits for a plugin that is still
// opening before it is answered 503 with retry_after_ms.
const DefaultOpenWait = 5 * time.Minute

// openPoll bounds the interval between two looks at an opening plugin's
// health; the first looks come sooner.
const openPoll = 250 * time.Millisecond

// stillOpening asks a just-described plugin whether it is still opening,
// and at which step. A plugin that does not answer is taken as open, as
// before plugins could say otherwise.
func (p *Process) stillOpening(ctx context.Context, rpc *hostconn.Conn) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := rpc.Health(ctx)
	if err != nil || resp.Status != seam.HealthOpening {
		return false, ""
	}
	return true, openingStep(resp)
}

// openingStep is the step an opening plugin's health names: details
// {"opening": {"step": …}} as the SDK reports it, else its message.
func openingStep(resp seam.Health) string {
	var d struct {
		Opening struct {
			Step string `json:"step"`
		} `json:"opening"`
	}
	if json.Unmarshal(resp.Details, &d) == nil && d.Opening.Step != "" {
		return d.Opening.Step
	}
	return resp.Message
}

// followOpening looks at the health of process r until it is open, then
// marks the plugin running and runs the Opened hook. It ends early when
// the process exits (watch restarts it) or the plugin is stopped.
func (p *Process) followOpening(rpc *hostconn.Conn, r *procRunner) {
	defer p.loops.Done()
	interval := 10 * time.Millisecond
	for {
		timer := time.NewTimer(interval)
		select {
		case <-r.exited:
			timer.Stop()
			return
		case <-p.stopCtx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		interval = min(2*interval, openPoll)
		ctx, cancel := context.WithTimeout(p.stopCtx, 2*time.Second)
		resp, err := rpc.Health(ctx)
		cancel()
		if err != nil {
			// A busy plugin may miss a look; its exit is watch's to see.
			p.log.Debug("opening plugin did not answer its health check", "error", grpcMessage(err))
			continue
		}
		p.mu.Lock()
		if p.runner != r || p.state != StateOpening {
			p.mu.Unlock()
			return
		}
		if resp.Status == seam.HealthOpening {
			p.openingStep = openingStep(resp)
			p.mu.Unlock()
			continue
		}
		took := time.Since(p.openingSince)
		p.openingStep, p.openingSince = "", time.Time{}
		p.setState(StateRunning)
		p.mu.Unlock()
		p.log.Info("plugin ready", "opened_in", took.Round(time.Millisecond).String(), "pid", r.pid)
		if p.hooks.Opened != nil {
			p.hooks.Opened(p)
		}
		return
	}
}

// openingLine is what the plugin is doing while it opens, and for how
// long. Call with mu held.
func (p *Process) openingLine() string {
	return fmt.Sprintf("%s (opening for %s)", p.openingStep, time.Since(p.openingSince).Round(time.Second))
}

// awaitOpen waits while the plugin is opening, for at most Env.OpenWait
// counted from start. It returns nil once the plugin is no longer opening
// (it may then be running, or restarting after its open failed), and a
// typed 503 when the wait or ctx ends first.
func (p *Process) awaitOpen(ctx context.Context, start time.Time) error {
	timer := time.NewTimer(time.Until(start.Add(p.env.OpenWait)))
	defer timer.Stop()
	for {
		p.mu.Lock()
		state, changed := p.state, p.changed
		line := ""
		if state == StateOpening {
			line = p.openingLine()
		}
		p.mu.Unlock()
		if state != StateOpening {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return p.stillOpeningError(line, ctx.Err().Error())
		case <-timer.C:
			return p.stillOpeningError(line, fmt.Sprintf("waited %s", p.env.OpenWait))
		}
	}
}

// stillOpeningError is the answer for a call that gave up waiting for an
// opening plugin: it was never sent, and may be sent again.
func (p *Process) stillOpeningError(line, why string) error {
	const retry = 5000
	return errs.Newf(503, errs.PluginUnavailable, "plugin %s is still opening: %s; the call was not sent (%s); retry in %d ms", p.spec.Name, line, why, retry).
		With("retry_after_ms", retry).With("retryable", true).With("applied", false).With("opening", true)
}
