package core

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// auditSvc returns the decision-trail service or a typed error before
// configuration.
func (c *Area) auditSvc() (*audit.Service, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.audit == nil {
		return nil, errs.New(503, errs.Unavailable, "the core store is not open")
	}
	return c.audit, nil
}

// auditTool completes one decision-trail tool whose handler only needs the
// service (and the caller), so each declaration stays one line of logic.
func auditTool[In, Out any](c *Area, t sdk.Tool[In, Out], run func(ctx context.Context, svc *audit.Service, in In) (Out, error)) sdk.Tool[In, Out] {
	t.Handler = func(ctx context.Context, in In) (Out, error) {
		svc, err := c.auditSvc()
		if err != nil {
			var zero Out
			return zero, err
		}
		return run(ctx, svc, in)
	}
	return t
}

// registerAuditTools registers the decision-trail tools: thoughts, audit
// sessions and their Merkle roots.
func (c *Area) registerAuditTools() {
	sdk.AddTools(c.p,
		c.thoughtRecord(),
		c.thoughtRecordList(),
		c.auditSessionStart(),
		c.auditVerifyChain(),
		c.merkleFinalize(),
		c.merkleRoot(),
		c.auditExport(),
		c.auditSessionList(),
	)
}

// thoughtRecord declares thought_record.
func (c *Area) thoughtRecord() sdk.Tool[thoughtRecordArgs, audit.RecordOutput] {
	return sdk.Tool[thoughtRecordArgs, audit.RecordOutput]{
		Name:               "thought_record",
		Title:              "Record thought",
		Description:        "Record a thought on a task's hash chain.",
		SuccessStatus:      201,
		HonoursIdempotency: true,
		// A replay after the daemon died returns the first outcome.
		Handler: func(ctx context.Context, in thoughtRecordArgs) (audit.RecordOutput, error) {
			svc, err := c.auditSvc()
			if err != nil {
				return audit.RecordOutput{}, err
			}
			return svc.RecordOnce(sdk.CallerFrom(ctx).ID, sdk.IdempotencyOf(ctx), sdk.TraceID(ctx), audit.RecordInput(in))
		},
	}
}

// thoughtRecordList declares thought_record_list.
func (c *Area) thoughtRecordList() sdk.Tool[thoughtListArgs, audit.ListOutput] {
	return auditTool(c, sdk.Tool[thoughtListArgs, audit.ListOutput]{
		Name:        "thought_record_list",
		Title:       "List thoughts",
		Description: "Latest thoughts of a task or audit session, oldest first; offset skips newer.",
		ReadOnly:    true,
		Idempotent:  true,
	}, func(_ context.Context, svc *audit.Service, in thoughtListArgs) (audit.ListOutput, error) {
		return svc.List(audit.ListInput(in))
	})
}

// auditSessionStart declares audit_session_start.
func (c *Area) auditSessionStart() sdk.Tool[auditStartArgs, audit.StartOutput] {
	return auditTool(c, sdk.Tool[auditStartArgs, audit.StartOutput]{
		Name:               "audit_session_start",
		Title:              "Start audit session",
		Description:        "Open an audit session over a task.",
		SuccessStatus:      201,
		HonoursIdempotency: true,
	}, func(ctx context.Context, svc *audit.Service, in auditStartArgs) (audit.StartOutput, error) {
		if err := auditorIsCaller(sdk.CallerFrom(ctx), in.AuditorID); err != nil {
			return audit.StartOutput{}, err
		}
		return svc.StartSessionOnce(sdk.IdempotencyOf(ctx), audit.StartInput(in))
	})
}

// auditVerifyChain declares audit_verify_chain.
func (c *Area) auditVerifyChain() sdk.Tool[auditVerifyArgs, audit.VerifyOutput] {
	return auditTool(c, sdk.Tool[auditVerifyArgs, audit.VerifyOutput]{
		Name:        "audit_verify_chain",
		Title:       "Verify chains",
		Description: "Check a task's or audit session's hash chains.",
		ReadOnly:    true,
		Idempotent:  true,
	}, func(_ context.Context, svc *audit.Service, in auditVerifyArgs) (audit.VerifyOutput, error) {
		return svc.Verify(audit.VerifyInput(in))
	})
}

// merkleFinalize declares merkle_finalize.
func (c *Area) merkleFinalize() sdk.Tool[merkleFinalizeArgs, finalizedSession] {
	return auditTool(c, sdk.Tool[merkleFinalizeArgs, finalizedSession]{
		Name:               "merkle_finalize",
		Title:              "Finalize Merkle root",
		Description:        "Freeze an audit session's Merkle root.",
		HonoursIdempotency: true,
	}, func(ctx context.Context, svc *audit.Service, in merkleFinalizeArgs) (finalizedSession, error) {
		out, err := svc.FinalizeOnce(sdk.IdempotencyOf(ctx), audit.FinalizeInput(in))
		return finalizedSession(out), err
	})
}

// merkleRoot declares merkle_root.
func (c *Area) merkleRoot() sdk.Tool[merkleRootArgs, audit.RootOutput] {
	return auditTool(c, sdk.Tool[merkleRootArgs, audit.RootOutput]{
		Name:        "merkle_root",
		Title:       "Merkle root",
		Description: "An audit session's Merkle root, frozen or current.",
		ReadOnly:    true,
		Idempotent:  true,
	}, func(_ context.Context, svc *audit.Service, in merkleRootArgs) (audit.RootOutput, error) {
		return svc.Root(audit.RootInput(in))
	})
}

// auditExport declares audit_export.
// The dashboard's proof-bundle download: the host signs what this
// returns, as `cairn audit export` does while no daemon holds the store.
// Internal: agents ask people for proofs, they do not mint them.
func (c *Area) auditExport() sdk.Tool[merkleRootArgs, audit.ExportOutput] {
	return auditTool(c, sdk.Tool[merkleRootArgs, audit.ExportOutput]{
		Name:        "audit_export",
		Title:       "Export a finalized session",
		Toolset:     sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): the frozen records of a finalized audit session with their hash inputs, and its frozen root, from which the host builds and signs the proof bundle of `cairn audit export`. An open session answers 409 ERR_CONFLICT; an unknown one 404 ERR_SESSION_NOT_FOUND.",
		ReadOnly:    true,
		Idempotent:  true,
	}, func(_ context.Context, svc *audit.Service, in merkleRootArgs) (audit.ExportOutput, error) {
		return svc.ExportParts(audit.ExportInput{SessionID: in.SessionID})
	})
}

// auditSessionList declares audit_session_list.
func (c *Area) auditSessionList() sdk.Tool[audit.SessionListInput, audit.SessionListOutput] {
	return auditTool(c, sdk.Tool[audit.SessionListInput, audit.SessionListOutput]{
		Name:        "audit_session_list",
		Title:       "List audit sessions",
		Toolset:     sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): one page of the audit sessions, newest first (limit 1-100, default 20; offset), or the one session_id names, each with its task, auditor, scope, start, and whether and when it was finalized with its frozen root; total_count counts them all. The dashboard's audits page lists sessions with it.",
		InputSchema: auditSessionListSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(_ context.Context, svc *audit.Service, in audit.SessionListInput) (audit.SessionListOutput, error) {
		return svc.ListSessions(in)
	})
}

// auditSessionListSchema is audit_session_list's input schema.
var auditSessionListSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "session_id": {"type": "string", "pattern": "^A-[1-9][0-9]*$", "description": "Only this session"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    "offset": {"type": "integer", "minimum": 0}
  }
}`)

// auditorIsCaller holds audit_session_start's auditor_id to the principal
// (docs/decisions.md D35): the one argument that names who acts must name,
// for an API-key caller, the key's own user; a session whose auditor is
// someone else would put that person's name on the trail. The local
// operator, whose identity is its own to choose (D4), names any auditor. A
// refusal is 403 ERR_FORBIDDEN with details.required "self".
func auditorIsCaller(c sdk.Caller, auditor string) error {
	if c.Operator() || auditor == c.ID {
		return nil
	}
	return errs.Newf(403, errs.Forbidden, "auditor_id must be your own user id (%s): an API key audits only as its own user, not as %s", c.ID, auditor).
		With("required", "self").With("field", "auditor_id")
}
