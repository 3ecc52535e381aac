package core

import (
	"context"

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
// service (and the caller), so the six declarations stay one line of logic
// each.
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
		Description:        "Record a reflection, decision, discovery, risk or blocker on a task's tamper-evident hash chain.",
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
		Description: "Read a task's or audit session's thought records, oldest first.",
		InputSchema: thoughtListSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.ListInput) (audit.ListOutput, error) {
		return svc.List(in)
	})
	auditTool(c, sdk.Tool[audit.StartInput, audit.StartOutput]{
		Name:          "audit_session_start",
		Title:         "Start audit session",
		Description:   "Open an audit session over a task (and optionally its sub-tasks) to verify and seal its records.",
		InputSchema:   auditStartSchema,
		SuccessStatus: 201,
	}, func(svc *audit.Service, _ string, in audit.StartInput) (audit.StartOutput, error) {
		return svc.StartSession(in)
	})
	auditTool(c, sdk.Tool[audit.VerifyInput, audit.VerifyOutput]{
		Name:        "audit_verify_chain",
		Title:       "Verify chains",
		Description: "Check that a task's or audit session's thought and event chains are intact. Answers 200 either way; see chain_valid and broken_links.",
		InputSchema: auditVerifySchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.VerifyInput) (audit.VerifyOutput, error) {
		return svc.Verify(in)
	})
	auditTool(c, sdk.Tool[audit.FinalizeInput, audit.FinalizeOutput]{
		Name:        "merkle_finalize",
		Title:       "Finalize Merkle root",
		Description: "Freeze an audit session's Merkle root once; later records never change it.",
		InputSchema: merkleFinalizeSchema,
	}, func(svc *audit.Service, _ string, in audit.FinalizeInput) (audit.FinalizeOutput, error) {
		return svc.Finalize(in)
	})
	auditTool(c, sdk.Tool[audit.RootInput, audit.RootOutput]{
		Name:        "merkle_root",
		Title:       "Merkle root",
		Description: "Show an audit session's Merkle root: the frozen one once finalized, else the current one.",
		InputSchema: merkleRootSchema,
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in audit.RootInput) (audit.RootOutput, error) {
		return svc.Root(in)
	})
}
