package ui

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// PersonSource marks calls a person made from the dashboard (D4: the
// identity lands in updated_by and recorded_by).
const PersonSource = "person"

// call runs one tool as the logged-in person and decodes its output into
// out (when non-nil).
func (s *Server) call(ctx context.Context, g Grant, name string, args any, out any) *errs.Error {
	raw, err := json.Marshal(args)
	if err != nil {
		return errs.New(500, errs.Internal, err.Error())
	}
	o := s.be.Call(ctx, name, raw, pipeline.Caller{ID: g.Person, Source: PersonSource})
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
