// Package engine is the spec-driven-development (SDD) domain of cairn
// (Area C): phase plans, timed execution leases, agent spawn rules and a
// spawn queue, a skill registry with agent assignments, a key-value state
// store, and evolution (detect, apply, roll back refinements).
//
// It is pure Go with no MCP or gRPC dependency: the sdd plugin (package
// plugins/sdd) wires the structured tool methods (VitalsTool, PlanTool,
// StateTool, ValidateTool, LeaseTool, EvolveTool, ToolDiscuss, ToolDash,
// ToolAgent, ToolSkill) to the ten sdd_ MCP tools, ListResources and
// ReadResource to the sdd:// resources, and Config.Publish to the host's
// event bus. The Tool* methods return the Markdown alone, as the
// specification's handleTool does; HandleTool dispatches raw arguments.
//
// All state lives in one JSON document, <DataDir>/state/sdd-state.json,
// cached in memory and replaced atomically (temp file, fsync, rename,
// directory fsync) on every write, so a SIGKILL at any moment leaves either
// the old or the new document, never a torn one.
//
// Errors are *errs.Error: 400 ERR_INVALID_INPUT naming the field and the
// constraint, 404 for unknown ids, 409 for state conflicts, 500 for I/O
// failures.
package engine
