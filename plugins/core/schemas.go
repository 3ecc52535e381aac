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
    "estimate_hours": {"type": "number", "minimum": 0, "maximum": 1000}
  }
}`)

var taskUpdateSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$"},
    "status": {"type": "string", "enum": ["backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"], "description": "Moves follow the transition table: backlog→todo|cancelled; todo→in_progress|blocked|cancelled; in_progress→review|blocked|cancelled; blocked→todo|in_progress|cancelled; review→done|backlog|blocked|cancelled; done and cancelled are final."},
    "progress": {"type": "number", "minimum": 0, "maximum": 100},
    "description": {"type": "string", "maxLength": 8000, "description": "Replaces the whole description."},
    "priority": {"type": "string", "enum": ["low", "normal", "high", "critical"]},
    "assignee": {"type": "string", "maxLength": 128},
    "labels": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "description": "Replaces all labels."},
    "blocked_reason": {"type": "string", "maxLength": 2000, "description": "Required (non-empty) when moving to blocked."}
  }
}`)

var taskGetSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["task_id"],
  "properties": {
    "task_id": {"type": "string", "pattern": "^T-[1-9][0-9]*$"},
    "include_thought_trail": {"type": "boolean", "default": false, "description": "Add the ids of the task's thought records."},
    "include_dependents": {"type": "boolean", "default": false, "description": "Add the ids of the task's sub-tasks."}
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
    "project": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$", "description": "Defaults to CAIRN_PROJECT, else the project you used last."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    "include_blocked": {"type": "boolean", "default": false}
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
