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
func (c *Core) auditSvc() (*audit.Service, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.audit == nil {
		return nil, errs.New(503, errs.Unavailable, "the core store is not open")
	}
	return c.audit, nil
}

// auditTool declares one decision-trail tool whose handler only needs the
// service (and the caller), so each declaration stays one line of logic.
func auditTool[In, Out any](c *Core, t sdk.Tool[In, Out], run func(svc *audit.Service, caller string, in In) (Out, error)) {
	t.Handler = func(ctx context.Context, in In) (Out, error) {
		svc, err := c.auditSvc()
		if err != nil {
			var zero Out
			return zero, err
		}
		return run(svc, sdk.CallerFrom(ctx).ID, in)
	}
	sdk.AddTool(c.p, t)
}

func (c *Core) registerAuditTools() {
	sdk.AddTool(c.p, sdk.Tool[audit.RecordInput, audit.RecordOutput]{
		Name:               "thought_record",
		Title:              "Record thought",
		Description:        "Appends a reflection, decision, discovery, risk or blockers note to the task's hash chain. The record is hashed (SHA-256 over task_id, type, content, previous_hash, recorded_at, recorded_by) and linked to the previous one, so later tampering is detectable. Returns thought_id (Θ-<n>), hash, previous_hash and chain_position.",
		InputSchema:        thoughtRecordSchema,
		SuccessStatus:      201,
		HonoursIdempotency: true,
		// A replay after the daemon died returns the first outcome.
		Handler: func(ctx context.Context, in audit.RecordInput) (audit.RecordOutput, error) {
			svc, err := c.auditSvc()
			if err != nil {
				return audit.RecordOutput{}, err
			}
			return svc.RecordOnce(sdk.CallerFrom(ctx).ID, sdk.IdempotencyOf(ctx).Key, in)
		},
	})
	auditTool(c, sdk.Tool[audit.ListInput, audit.ListOutput]{
		Name:        "thought_record_list",
		Title:       "List thoughts",
		Description: "Lists a task's thought records (task_id) or those of an audit session's tasks (session_id): the latest `limit` (default 100, max 500), oldest first, optionally of one type. verify_chain checks the whole thought chain(s) as audit_verify_chain does and adds chain_valid and invalid_links (broken positions).",
		InputSchema: thoughtListSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.ListInput) (audit.ListOutput, error) {
		return svc.List(in)
	})
	auditTool(c, sdk.Tool[audit.StartInput, audit.StartOutput]{
		Name:          "audit_session_start",
		Title:         "Start audit session",
		Description:   "Opens an audit session over a task: scope shallow (the task) or deep (the task and all its sub-tasks). Use the session with audit_verify_chain, merkle_root and merkle_finalize.",
		InputSchema:   auditStartSchema,
		SuccessStatus: 201,
	}, func(svc *audit.Service, _ string, in audit.StartInput) (audit.StartOutput, error) {
		return svc.StartSession(in)
	})
	auditTool(c, sdk.Tool[audit.VerifyInput, audit.VerifyOutput]{
		Name:        "audit_verify_chain",
		Title:       "Verify chains",
		Description: "Recomputes the thought and event chains of an audit session's tasks (session_id) or of one task (task_id) and checks them against each chain's stored head and every finalized Merkle root that sealed their records, so deleted last records and chains rewritten with fresh hashes are caught too: chain_valid, total_records, missing_records, integrity_score (percent of links that verify) and broken_links with the chain position, a reason (hash_mismatch, previous_hash_mismatch, missing_record, head_mismatch, root_mismatch) and the expected and actual hash. full_trace adds every record's hashes and verdict. Answers 200 whether or not the chain is intact.",
		InputSchema: auditVerifySchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.VerifyInput) (audit.VerifyOutput, error) {
		return svc.Verify(in)
	})
	auditTool(c, sdk.Tool[audit.FinalizeInput, finalizedSession]{
		Name:        "merkle_finalize",
		Title:       "Finalize Merkle root",
		Description: "Freezes the audit session's Merkle root over its records (both chains of every task in scope, in recorded order; task_id restricts to one task). Records added later never change the frozen root. A second call answers 409 ERR_ALREADY_FINALIZED. Operators export a signed, offline-verifiable proof with `cairn audit export <session>`.",
		InputSchema: merkleFinalizeSchema,
	}, func(svc *audit.Service, _ string, in audit.FinalizeInput) (finalizedSession, error) {
		out, err := svc.Finalize(in)
		return finalizedSession(out), err
	})
	auditTool(c, sdk.Tool[audit.RootInput, audit.RootOutput]{
		Name:        "merkle_root",
		Title:       "Merkle root",
		Description: "Reports an audit session's Merkle root: the frozen root once finalized (is_finalized true), else the root over the records in scope now, with as_of, the time of the last change it reflects.",
		InputSchema: merkleRootSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.RootInput) (audit.RootOutput, error) {
		return svc.Root(in)
	})
	// The dashboard's proof-bundle download: the host signs what this
	// returns, as `cairn audit export` does while no daemon holds the store.
	// Internal: agents ask people for proofs, they do not mint them.
	auditTool(c, sdk.Tool[audit.ExportInput, audit.ExportOutput]{
		Name:        "audit_export",
		Title:       "Export a finalized session",
		Toolset:     InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): the frozen records of a finalized audit session with their hash inputs, and its frozen root, from which the host builds and signs the proof bundle of `cairn audit export`. An open session answers 409 ERR_CONFLICT; an unknown one 404 ERR_SESSION_NOT_FOUND.",
		InputSchema: merkleRootSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.ExportInput) (audit.ExportOutput, error) {
		return svc.ExportParts(in)
	})
	auditTool(c, sdk.Tool[audit.SessionListInput, audit.SessionListOutput]{
		Name:        "audit_session_list",
		Title:       "List audit sessions",
		Toolset:     InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): one page of the audit sessions, newest first (limit 1-100, default 20; offset), or the one session_id names, each with its task, auditor, scope, start, and whether and when it was finalized with its frozen root; total_count counts them all. The dashboard's audits page lists sessions with it.",
		InputSchema: auditSessionListSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.SessionListInput) (audit.SessionListOutput, error) {
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

// InternalToolset is the reserved toolset of tools only the host calls; no
// session lists or calls them.
const InternalToolset = "internal"
