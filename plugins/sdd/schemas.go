package sdd

import "encoding/json"

// Input and output schemas of the sdd tools, written out by hand so every
// rule an agent can break is visible before it calls. The engine enforces
// the same rules again (and the per-action requirements, which a schema
// cannot express readably), answering with ERR_INVALID_INPUT naming
// details.field and details.constraint.
//
// Output schemas describe the success object only; the host widens each one
// to also admit the error envelope (PRODUCT.md D3).

// safeNamePattern is the engine's rule for every name that can become part
// of a file name or URI (phases, command, agent, skill and intent ids).
const safeNamePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

// Shared fragments, spliced into the schemas below.
const (
	spawnOptionsSchema = `{
    "type": "object",
    "additionalProperties": false,
    "description": "Stage skips: skipResearch or hasResearch drop plan_phase's before stages; skipVerify drops the after stages; planFix false drops debug_issue's.",
    "properties": {
      "skipResearch": {"type": "boolean"},
      "skipVerify": {"type": "boolean"},
      "hasResearch": {"type": "boolean"},
      "planFix": {"type": "boolean"}
    }
  }`
	agentListSchema = `{"type": "array", "maxItems": 100, "items": {"type": "string", "pattern": "` + safeNamePattern + `"}}`

	leaseSchema = `{
    "type": "object",
    "required": ["leaseId", "taskId", "scope", "issuedAt", "expiresAt"],
    "properties": {
      "leaseId": {"type": "string"},
      "taskId": {"type": "string"},
      "scope": {"type": "array", "items": {"type": "string"}},
      "issuedAt": {"type": "string", "description": "ISO-8601 UTC."},
      "expiresAt": {"type": "string", "description": "issuedAt plus LEASE_DURATION_MS (one hour)."},
      "returnedAt": {"type": "string"},
      "result": {"type": "string"}
    }
  }`
	queueItemSchema = `{
    "type": "object",
    "required": ["spawnId", "flowId", "intent", "agent", "order", "stage", "mode", "status", "note", "createdAt"],
    "properties": {
      "spawnId": {"type": "string"},
      "flowId": {"type": "string"},
      "intent": {"type": "string"},
      "agent": {"type": "string"},
      "order": {"type": "integer"},
      "stage": {"type": "string", "enum": ["before", "main", "after"]},
      "mode": {"type": "string", "enum": ["sequential", "parallel"]},
      "status": {"type": "string", "enum": ["pending", "completed", "failed", "skipped"]},
      "note": {"type": "string"},
      "sourceTool": {"type": "string"},
      "createdAt": {"type": "string"},
      "completedAt": {"type": "string"}
    }
  }`
	skillSchema = `{
    "type": "object",
    "required": ["skillId", "title", "description", "tags", "createdAt", "updatedAt"],
    "properties": {
      "skillId": {"type": "string"},
      "title": {"type": "string"},
      "description": {"type": "string"},
      "tags": {"type": "array", "items": {"type": "string"}},
      "createdAt": {"type": "string"},
      "updatedAt": {"type": "string"}
    }
  }`
	phaseSchema = `{"anyOf": [{"type": "string", "minLength": 1, "pattern": "` + safeNamePattern + `"}, {"type": "number"}], "description": "Phase number or name (1-64 letters, digits, '.', '_' or '-'; never a path)."}`
)

var vitalsInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "command": {"type": "string", "pattern": "` + safeNamePattern + `", "description": "Command id (.agents/commands/<id>.md, else a bundled default); default plan-phase until a phase is planned, then execute-phase."}
  }
}`)

var vitalsOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "vitals"],
  "properties": {
    "text": {"type": "string", "description": "Markdown: health, status, phase, active lease count and the command's sections."},
    "vitals": {
      "type": "object",
      "required": ["command", "source", "sections", "state", "health"],
      "properties": {
        "command": {"type": "string"},
        "source": {"type": "string", "enum": ["workspace", "bundled", "synthetic"]},
        "path": {"type": "string", "description": "Root-relative path of a workspace command file."},
        "sections": {
          "type": "object",
          "properties": {
            "objective": {"type": "string"}, "context": {"type": "string"}, "process": {"type": "string"},
            "constraints": {"type": "string"}, "tasks": {"type": "string"}, "successChecks": {"type": "string"}
          }
        },
        "state": {
          "type": "object",
          "properties": {"phase": {"type": "string"}, "activeLeases": {"type": "integer"}, "status": {"type": "string"}}
        },
        "health": {
          "type": "object",
          "properties": {"status": {"type": "string"}, "problems": {"type": "array", "items": {"type": "string"}}, "recovery": {"type": "object"}}
        },
        "synthetic": {"type": "boolean", "description": "True when no command file exists and the sections are generic."}
      }
    }
  }
}`)

var planInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["phase"],
  "properties": {
    "phase": ` + phaseSchema + `,
    "context": {"type": "string", "maxLength": 20000, "description": "Free text: the first line becomes the objective, '- ' lines become tasks, 'success:' lines success criteria."},
    "auto_spawn": {"type": "boolean", "description": "Also queue the plan_phase agent flow and summarize it."},
    "skip_research": {"type": "boolean", "description": "With auto_spawn: skip the research (before) stage."},
    "skip_verify": {"type": "boolean", "description": "With auto_spawn: skip the plan check (after) stage."},
    "has_research": {"type": "boolean", "description": "With auto_spawn: research exists already; skip the before stage."}
  }
}`)

var planOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "phase", "path"],
  "properties": {
    "text": {"type": "string", "description": "The plan Markdown, then where it was written and, with auto_spawn, the spawn-flow summary."},
    "phase": {"type": "string"},
    "path": {"type": "string", "description": "Root-relative plan file: .planning/PLAN-phase-<phase>.md."},
    "flow": {
      "type": "object",
      "description": "With auto_spawn: the queued plan_phase flow.",
      "required": ["flowId", "plan", "queueItems"],
      "properties": {
        "flowId": {"type": "string"},
        "plan": {"type": "object"},
        "queueItems": {"type": "array", "items": ` + queueItemSchema + `}
      }
    }
  }
}`)

var discussInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["phase"],
  "properties": {
    "phase": ` + phaseSchema + `,
    "topic": {"type": "string", "maxLength": 20000, "description": "What to discuss within the phase."}
  }
}`)

var textOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text"],
  "properties": {
    "text": {"type": "string", "description": "Markdown."}
  }
}`)

var stateInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["action"],
  "properties": {
    "action": {"type": "string", "enum": ["get", "set", "list", "delete"], "description": "get, set and delete need keyPath; set needs value; list takes an optional keyPath."},
    "keyPath": {"type": "string", "maxLength": 512, "pattern": "^[a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*$", "description": "Dot-separated segments (at most 32; not __proto__, prototype or constructor). Top-level currentPhase also sets the current phase."},
    "value": {"anyOf": [{"type": "object"}, {"type": "array"}, {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}], "description": "Any JSON value, required for set: at most 64 levels of nesting and 256 KiB of compact JSON."}
  }
}`)

var stateOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "action", "found"],
  "properties": {
    "text": {"type": "string", "description": "get/list: the value as JSON (indented when small), or a 'No value is stored' line; set/delete: a confirmation line."},
    "action": {"type": "string"},
    "keyPath": {"type": "string"},
    "found": {"type": "boolean", "description": "get/list: a value exists at keyPath; set: true; delete: something was deleted."},
    "value": {"description": "get/list/set: the stored JSON value (the whole tree for list without keyPath)."}
  }
}`)

var validateInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["content"],
  "properties": {
    "content": {"type": "string", "minLength": 1, "maxLength": 1048576, "description": "The document text."},
    "type": {"type": "string", "enum": ["plan", "project", "requirements"], "default": "plan", "description": "plan needs objective, context, tasks, verification, success_criteria; project needs What This Is, Core Value, Requirements; requirements needs v1 Requirements, Out of Scope, Traceability. Each as a <tag> block or a ## heading."}
  }
}`)

var validateOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "valid", "missing", "type"],
  "properties": {
    "text": {"type": "string", "description": "DOCTRINE VALIDATED, or DOCTRINE VIOLATIONS with one line per missing section."},
    "valid": {"type": "boolean"},
    "missing": {"type": "array", "items": {"type": "string"}},
    "type": {"type": "string", "enum": ["plan", "project", "requirements"]}
  }
}`)

var leaseInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["action"],
  "properties": {
    "action": {"type": "string", "enum": ["issue", "return", "list"], "description": "issue needs taskId; return needs leaseId."},
    "taskId": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The task the lease covers (for example a task_create id)."},
    "scope": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 256}, "description": "What the lease holder may touch (files, packages)."},
    "leaseId": {"type": "string", "pattern": "^L-[1-9][0-9]*$"},
    "result": {"type": "string", "maxLength": 20000, "description": "Outcome recorded on return; default completed."}
  }
}`)

var leaseOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "action"],
  "properties": {
    "text": {"type": "string", "description": "Markdown lease info (issue), a confirmation (return) or a table of active leases (list)."},
    "action": {"type": "string"},
    "lease": ` + leaseSchema + `,
    "leases": {"type": "array", "items": ` + leaseSchema + `, "description": "list: the active leases, oldest first."}
  }
}`)

var dashInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "format": {"type": "string", "enum": ["text", "json"], "default": "text"}
  }
}`)

var dashOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["format"],
  "properties": {
    "format": {"type": "string", "enum": ["text", "json"]},
    "text": {"type": "string", "description": "format text: the Markdown dashboard."},
    "dashboard": {
      "type": "object",
      "description": "format json: stats, phases, active leases, pending spawns, spawn counts, bindings, evolution counts.",
      "required": ["generatedAt", "stats", "phases", "activeLeases", "pendingSpawns", "spawnCounts", "bindings", "evolution"],
      "properties": {
        "generatedAt": {"type": "string"},
        "stats": {
          "type": "object",
          "required": ["currentPhase", "activeLeases", "totalLeases", "activeSpawnItems", "totalSpawnItems", "skillsRegistered", "status"],
          "properties": {
            "currentPhase": {"type": "string"}, "activeLeases": {"type": "integer"}, "totalLeases": {"type": "integer"},
            "activeSpawnItems": {"type": "integer"}, "totalSpawnItems": {"type": "integer"}, "skillsRegistered": {"type": "integer"},
            "status": {"type": "string", "enum": ["ok", "stale", "degraded"]}, "lastWriteAt": {"type": "string"},
            "problems": {"type": "array", "items": {"type": "string"}}, "recovery": {"type": "object"}
          }
        },
        "phases": {"type": "array", "items": {"type": "object"}},
        "activeLeases": {"type": "array", "items": ` + leaseSchema + `},
        "pendingSpawns": {"type": "array", "items": ` + queueItemSchema + `},
        "spawnCounts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "bindings": {"type": "object"},
        "evolution": {"type": "object", "additionalProperties": {"type": "integer"}}
      }
    }
  }
}`)

var evolveInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["action"],
  "properties": {
    "action": {"type": "string", "enum": ["detect", "apply", "rollback", "report"], "description": "apply and rollback need candidateId; detect and report take an optional scope."},
    "scope": {"type": "string", "enum": ["all", "workflow", "doctrine"], "default": "all", "description": "doctrine: phases without a plan file; workflow: expired unreturned leases, a project without a state write for 24 h."},
    "candidateId": {"type": "string", "minLength": 1, "maxLength": 256, "description": "An id from detect (apply), or of an applied candidate (rollback)."},
    "force": {"type": "boolean", "description": "apply: proceed below confidence 0.7 and overwrite an existing plan file."}
  }
}`)

var evolveOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text", "action"],
  "properties": {
    "text": {"type": "string", "description": "Markdown evolution output."},
    "action": {"type": "string"},
    "candidates": {
      "type": "array",
      "description": "detect and report: the current candidates.",
      "items": {
        "type": "object",
        "required": ["id", "scope", "confidence", "description", "action"],
        "properties": {
          "id": {"type": "string"}, "scope": {"type": "string"}, "confidence": {"type": "number"},
          "description": {"type": "string"}, "action": {"type": "object"}
        }
      }
    },
    "apply": {
      "type": "object",
      "required": ["success", "candidateId", "message"],
      "properties": {
        "success": {"type": "boolean"}, "candidateId": {"type": "string"}, "actionId": {"type": "string"},
        "message": {"type": "string"}, "recommendation": {"type": "string"}
      }
    },
    "rollback": {
      "type": "object",
      "required": ["success", "candidateId", "actionId", "message"],
      "properties": {
        "success": {"type": "boolean"}, "candidateId": {"type": "string"}, "actionId": {"type": "string"}, "message": {"type": "string"}
      }
    }
  }
}`)

var agentInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["action"],
  "properties": {
    "action": {"type": "string", "enum": ["rules", "set_rule", "plan", "enqueue", "queue", "complete", "history"], "description": "set_rule needs intent and rule; plan and enqueue need intent; complete needs spawnId and completionStatus; rules takes an optional intent, queue an optional status, history an optional limit."},
    "intent": {"type": "string", "pattern": "` + safeNamePattern + `", "description": "Built-in intents: plan_phase, execute_phase, debug_issue; set_rule creates others."},
    "options": ` + spawnOptionsSchema + `,
    "rule": {
      "type": "object",
      "additionalProperties": false,
      "description": "Agents per stage, run in the order before, beforeParallel, main, after, afterParallel; at least one agent.",
      "properties": {
        "before": ` + agentListSchema + `,
        "beforeParallel": ` + agentListSchema + `,
        "main": ` + agentListSchema + `,
        "after": ` + agentListSchema + `,
        "afterParallel": ` + agentListSchema + `,
        "notes": {"type": "string", "maxLength": 20000}
      }
    },
    "status": {"type": "string", "enum": ["pending", "completed", "failed", "skipped"], "description": "queue: only items with this status."},
    "spawnId": {"type": "string", "minLength": 1, "maxLength": 256, "description": "complete: the queue item, e.g. S-3 (sdd_agent queue lists them); an unknown id is 404."},
    "completionStatus": {"type": "string", "enum": ["completed", "failed", "skipped"]},
    "note": {"type": "string", "maxLength": 20000, "description": "complete: what happened."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "history: the last N events."}
  }
}`)

var agentOutputSchema = json.RawMessage(`{
  "type": "object",
  "description": "By action. rules: {rules, intents}, or {intent, rule} with intent. set_rule: {intent, rule}. plan: the spawn plan {intent, before, beforeParallel, main, after, afterParallel, notes, options, availableAgents, steps}. enqueue: {flowId, plan, queueItems}. queue: {items, count}. complete: the closed queue item. history: {events, count}.",
  "properties": {
    "rules": {"type": "object", "description": "Rules by intent."},
    "intents": {"type": "array", "items": {"type": "string"}},
    "intent": {"type": "string"},
    "rule": {"type": "object"},
    "before": {"type": "array", "items": {"type": "string"}},
    "beforeParallel": {"type": "array", "items": {"type": "string"}},
    "main": {"type": "array", "items": {"type": "string"}},
    "after": {"type": "array", "items": {"type": "string"}},
    "afterParallel": {"type": "array", "items": {"type": "string"}},
    "notes": {"type": "array", "items": {"type": "string"}},
    "options": {"type": "object"},
    "availableAgents": {"type": "array", "items": {"type": "string"}},
    "steps": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["order", "agent", "stage", "mode"],
        "properties": {"order": {"type": "integer"}, "agent": {"type": "string"}, "stage": {"type": "string"}, "mode": {"type": "string"}}
      }
    },
    "flowId": {"type": "string"},
    "plan": {"type": "object"},
    "queueItems": {"type": "array", "items": ` + queueItemSchema + `},
    "items": {"type": "array", "items": ` + queueItemSchema + `},
    "count": {"type": "integer"},
    "events": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["kind", "intent", "details", "at"],
        "properties": {
          "kind": {"type": "string", "enum": ["queued", "completed", "rule_set"]}, "intent": {"type": "string"},
          "flowId": {"type": "string"}, "details": {"type": "object"}, "at": {"type": "string"}
        }
      }
    },
    "spawnId": {"type": "string"},
    "agent": {"type": "string"},
    "order": {"type": "integer"},
    "stage": {"type": "string"},
    "mode": {"type": "string"},
    "status": {"type": "string"},
    "note": {"type": "string"},
    "sourceTool": {"type": "string"},
    "createdAt": {"type": "string"},
    "completedAt": {"type": "string"}
  }
}`)

var skillInputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["action"],
  "properties": {
    "action": {"type": "string", "enum": ["list", "register", "bind", "unbind", "recommend"], "description": "register needs skillId; bind and unbind need agentId and skillId; recommend needs intent; list takes an optional agentId."},
    "skillId": {"type": "string", "pattern": "` + safeNamePattern + `"},
    "title": {"type": "string", "maxLength": 256},
    "description": {"type": "string", "maxLength": 20000},
    "tags": {"type": "array", "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 256}},
    "agentId": {"type": "string", "pattern": "` + safeNamePattern + `", "description": "An agent id such as sdd-planner."},
    "intent": {"type": "string", "pattern": "` + safeNamePattern + `"},
    "options": ` + spawnOptionsSchema + `
  }
}`)

var skillOutputSchema = json.RawMessage(`{
  "type": "object",
  "description": "By action. list: {registry, agents[{agentId, skillIds, skills}]}. register: the skill {skillId, title, description, tags, createdAt, updatedAt}. bind, unbind: {agentId, skillIds}. recommend: {intent, agents, skillIds, skills} in plan order.",
  "properties": {
    "registry": {"type": "array", "items": ` + skillSchema + `},
    "agents": {"type": "array", "description": "list: objects {agentId, skillIds, skills}; recommend: agent ids."},
    "skillId": {"type": "string"},
    "title": {"type": "string"},
    "description": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "createdAt": {"type": "string"},
    "updatedAt": {"type": "string"},
    "agentId": {"type": "string"},
    "skillIds": {"type": "array", "items": {"type": "string"}},
    "skills": {"type": "array", "items": ` + skillSchema + `},
    "intent": {"type": "string"}
  }
}`)
