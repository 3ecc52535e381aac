package sdd

import "encoding/json"

// Output schemas of the sdd tools, still written out by hand: they
// describe per-action shapes and fields of engine types that the input
// argument types (args.go) do not cover yet. They describe the success
// object only; tools/list publishes the host's listed form (PRODUCT.md D3),
// and the SDK checks every output against them in tests and TEST mode.

// Shared fragments, spliced into the schemas below.
const (
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
)

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

var textOutputSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["text"],
  "properties": {
    "text": {"type": "string", "description": "Markdown."}
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
