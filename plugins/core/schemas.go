package core

import "encoding/json"

// Input schemas of the core tools, written out by hand so every limit of
// the specification (part 8) is visible to agents before they call. The
// domain package enforces the same rules again.

var taskCreateSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["title", "project"],
  "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Short imperative title."},
    "description": {"type": "string", "maxLength": 8000, "description": "Markdown details, acceptance criteria."},
    "project": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$", "description": "Project slug; must be registered (cairn project add, CAIRN_PROJECT)."},
    "parent_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$", "description": "Parent task for a sub-task (same project)."},
    "priority": {"type": "string", "enum": ["low", "normal", "high", "critical"], "default": "normal"},
    "labels": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}},
    "assignee": {"type": "string", "maxLength": 128, "default": "unassigned", "description": "Agent or user id."},
    "estimate_hours": {"type": "number", "minimum": 0, "maximum": 1000},
    "depends_on": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^T-[1-9][0-9]*$"}, "description": "Tasks of the same project this one waits on; task_next_actions offers it once each is done or cancelled."}
  }
}`)

var taskUpdateSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$"},
    "status": {"type": "string", "enum": ["backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"], "description": "Moves: backlog→todo; todo→in_progress|blocked; in_progress→review|blocked; blocked→todo|in_progress; review→done|backlog|blocked; any open status→cancelled; done and cancelled are final."},
    "progress": {"type": "number", "minimum": 0, "maximum": 100},
    "description": {"type": "string", "maxLength": 8000, "description": "Replaces the whole description."},
    "priority": {"type": "string", "enum": ["low", "normal", "high", "critical"]},
    "assignee": {"type": "string", "maxLength": 128},
    "labels": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "description": "Replaces all labels."},
    "blocked_reason": {"type": "string", "maxLength": 2000, "description": "Required (non-empty) when moving to blocked."},
    "depends_on": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^T-[1-9][0-9]*$"}, "description": "Replaces the dependencies ([] removes them); a loop is refused with ERR_CIRCULAR_DEPENDENCY (details.cycle)."},
    "claim": {"type": "boolean", "description": "Take the task (in_progress, assigned to you); ERR_CONFLICT names the holder if another agent has it."},
    "release": {"type": "boolean", "description": "Give your claim back: the task returns to todo, unassigned."}
  }
}`)

var taskGetSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$"},
    "include_thought_trail": {"type": "boolean", "description": "Add the ids of the task's thought records."},
    "include_dependents": {"type": "boolean", "description": "Add its sub-task ids (dependents) and the tasks waiting on it (depended_on_by)."}
  }
}`)

var taskListSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "project": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$"},
    "status": {"type": "array", "items": {"type": "string", "enum": ["backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"]}},
    "priority": {"type": "array", "items": {"type": "string", "enum": ["low", "normal", "high", "critical"]}},
    "assignee": {"type": "string"},
    "label": {"type": "string"},
    "created_after": {"type": "string", "description": "ISO-8601; only tasks created after it."},
    "created_before": {"type": "string", "description": "ISO-8601; only tasks created before it."},
    "search": {"type": "string", "maxLength": 500, "description": "Case-insensitive; every whitespace-separated term must occur in the title or the description."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
    "offset": {"type": "integer", "minimum": 0, "default": 0},
    "sort_by": {"type": "string", "enum": ["created", "updated", "priority", "progress"], "default": "updated"},
    "sort_order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"}
  }
}`)

var taskNextSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "project": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$", "description": "Default: your session's project, else the one you used last."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    "include_blocked": {"type": "boolean", "description": "Add blocked: tasks in status blocked (with blocked_reason) and todo tasks still waiting on dependencies (with waiting_on)."},
    "claim": {"type": "boolean", "description": "Atomically take the first candidate (in_progress, assigned to you) and return only it."}
  }
}`)

var skillListSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "search": {"type": "string", "maxLength": 200, "description": "Case-insensitive substring of the name or description."},
    "capability": {"type": "string", "maxLength": 100, "description": "One declared capability, matched exactly."}
  }
}`)

var thoughtRecordSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id", "type", "content"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$", "description": "The task the thought belongs to."},
    "type": {"type": "string", "enum": ["reflection", "decision", "discovery", "risk", "blockers"]},
    "content": {"type": "string", "minLength": 1, "maxLength": 5000, "description": "What you thought, decided or found, in your own words."},
    "branch": {"type": "string", "maxLength": 255, "description": "Version-control branch the work is on."},
    "commit_sha": {"type": "string", "maxLength": 128, "description": "Commit the thought refers to."},
    "tests_run": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 1000}},
    "blockers": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 1000}},
    "metadata": {"type": "object", "description": "Any JSON object (at most 16 KiB); stored, not hashed."}
  }
}`)

var thoughtListSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$", "description": "List this task's thoughts. Give task_id or session_id (or both: that task within the session)."},
    "session_id": {"type": "string", "pattern": "^A-[1-9][0-9]*$", "description": "List the thoughts of the audit session's tasks."},
    "type": {"type": "string", "enum": ["reflection", "decision", "discovery", "risk", "blockers"]},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100, "description": "Return the latest N matching thoughts, oldest first."},
    "verify_chain": {"type": "boolean", "description": "Recompute the thought chain(s) and report chain_valid and invalid_links."}
  }
}`)

var auditStartSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id", "auditor_id"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$"},
    "auditor_id": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Who audits (agent or user id)."},
    "reason": {"type": "string", "maxLength": 2000},
    "scope": {"type": "string", "enum": ["shallow", "deep"], "default": "shallow", "description": "shallow: the task only; deep: the task and all its sub-tasks, recursively."}
  }
}`)

var auditVerifySchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "session_id": {"type": "string", "pattern": "^A-[1-9][0-9]*$", "description": "Verify every chain of the session's tasks."},
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$", "description": "Verify one task's thought and event chains. At least one of session_id and task_id is required."},
    "full_trace": {"type": "boolean", "description": "Add trace: every record with its stored and recomputed hash and verdict."}
  }
}`)

var merkleFinalizeSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["session_id"],
  "properties": {
    "session_id": {"type": "string", "pattern": "^A-[1-9][0-9]*$"},
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$", "description": "Seal only this task's records (it must be in the session's scope)."}
  }
}`)

var merkleRootSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["session_id"],
  "properties": {
    "session_id": {"type": "string", "pattern": "^A-[1-9][0-9]*$"}
  }
}`)
