// Package engine is the spec-driven-development (SDD) domain of cairn
// (Area C): phase plans, timed execution leases, agent spawn rules and a
// spawn queue, a skill registry with agent assignments, a key-value state
// store, and evolution (detect, apply, roll back refinements).
//
// It is pure Go with no MCP or gRPC dependency and knows no tool names: the
// sdd plugin (package plugins/sdd) wires the structured methods
// (VitalsTool, PlanTool, DiscussTool, StateTool, ValidateTool, LeaseTool,
// DashTool, EvolveTool, AgentTool, SkillTool) to the ten sdd_ MCP tools,
// ListResources and ReadResource to the sdd:// resources, and
// Config.Publish to the host's event bus (PublishDurable). A Call carries
// the calling tool's name and the call's idempotency key: a keyed write
// records its outcome in the same atomic write, and a repeated key returns
// it.
//
// Files under the workspace root and the data dir are read and written
// through os.Root (wsfs.go): symlinks cannot lead outside, and only
// regular files with one hard link are read, checked before opening.
//
// All state lives in one JSON document, <DataDir>/state/sdd-state.json,
// cached in memory and replaced atomically (temp file, fsync, rename,
// directory fsync) on every write, so a SIGKILL at any moment leaves either
// the old or the new document, never a torn one. It is written compactly
// and bounded (MaxValueDepth, MaxValueBytes, MaxStateBytes). The events a
// write causes are recorded in the same document and published from there
// until handled (outbox.go, drainer.go), so they survive a crash.
//
// Errors are *errs.Error: 400 ERR_INVALID_INPUT naming the field and the
// constraint, 404 for unknown ids, 409 for state conflicts, 500 for I/O
// failures.
package engine
