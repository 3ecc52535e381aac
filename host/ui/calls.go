package ui

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// PersonSource marks calls a person made from the dashboard (D4: the
// identity lands in updated_by and recorded_by).
const PersonSource = "person"

// personSession is the session a login's calls run in: the person is the
// operator of the data dir (they ran `cairn ui`), so every area's toolset is
// theirs, but a read-only login runs in READONLY mode, so the host itself
// refuses any write it would make, whatever the page asks.
func personSession(g Grant) *clientsession.Settings {
	mode := config.ModeReadOnly
	if g.AllowActions {
		mode = config.ModeFull
	}
	return &clientsession.Settings{AgentID: g.Person, Project: g.Project, Toolsets: config.Toolsets{All: true}, Mode: mode}
}

// readSession is the session of a read made through a tool that also
// writes under other actions (sdd_agent queue, sdd_skill list): the mode
// cannot tell such a read from a write, so it runs in FULL mode; only the
// page loaders call it, with read actions.
func readSession(g Grant) *clientsession.Settings {
	s := personSession(g)
	s.Mode = config.ModeFull
	return s
}

// call runs one tool as the logged-in person, through the host's pipeline
// in the person's session, and decodes its output into out (when non-nil).
func (s *Server) call(ctx context.Context, g Grant, name string, args any, out any) *errs.Error {
	return s.run(clientsession.With(ctx, personSession(g)), g, name, args, out, s.be.Call)
}

// callReadAction runs a read action of a tool that multiplexes reads and
// writes (see readSession).
func (s *Server) callReadAction(ctx context.Context, g Grant, name string, args any, out any) *errs.Error {
	return s.run(clientsession.With(ctx, readSession(g)), g, name, args, out, s.be.Call)
}

// callInternal runs one of the internal toolset's tools (which no session
// calls) as the person.
func (s *Server) callInternal(ctx context.Context, g Grant, name string, args any, out any) *errs.Error {
	return s.run(clientsession.With(ctx, personSession(g)), g, name, args, out, s.be.CallInternal)
}

func (s *Server) run(ctx context.Context, g Grant, name string, args any, out any,
	via func(context.Context, string, json.RawMessage, seam.Caller) *seam.Result) *errs.Error {
	raw, err := json.Marshal(args)
	if err != nil {
		return errs.New(500, errs.Internal, err.Error())
	}
	o := via(ctx, name, raw, seam.Caller{ID: g.Person, Source: PersonSource, Project: g.Project})
	if o == nil {
		return errs.Newf(500, errs.Internal, "%s returned nothing", name)
	}
	if o.Err != nil {
		return o.Err
	}
	if out != nil {
		if err := json.Unmarshal(o.Output, out); err != nil {
			return errs.Newf(500, errs.ToolOutputMalformed, "%s: %v", name, err)
		}
	}
	return nil
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeErr answers a typed error as the tools do: {"error": {...}}.
func writeErr(w http.ResponseWriter, e *errs.Error) {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	status := e.Status
	if status == 0 {
		status = 500
	}
	writeJSON(w, status, map[string]any{"error": e})
}
