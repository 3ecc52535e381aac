package sdd

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
)

// The argument types of the sdd tools. Their tags (and, where tags cannot
// say it, their AmendSchema method) are the tools' input schemas, so every
// rule an agent can break is visible before it calls; the engine enforces
// the same rules again, and the per-action requirements a schema cannot
// express readably, answering ERR_INVALID_INPUT with details.field and
// details.constraint. Each has exactly the fields of its engine input, so
// a handler converts it (Go ignores tags in conversions) and a field added
// to one but not the other stops the build.

// safeNamePattern is the engine's rule for every name that can become part
// of a file name or URI (phases, command, agent, skill and intent ids).
const safeNamePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

type vitalsArgs struct {
	Command string `json:"command,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" description:"Command id (.agents/commands/<id>.md, else a bundled default); default plan-phase until a phase is planned, then execute-phase."`
}

type planArgs struct {
	Phase        engine.Phase `json:"phase"`
	Context      string       `json:"context,omitempty" jsonschema:"maxLength=20000" description:"Free text: the first line becomes the objective, '- ' lines become tasks, 'success:' lines success criteria."`
	AutoSpawn    bool         `json:"auto_spawn,omitempty" description:"Also queue the plan_phase agent flow and summarize it."`
	SkipResearch bool         `json:"skip_research,omitempty" description:"With auto_spawn: skip the research (before) stage."`
	SkipVerify   bool         `json:"skip_verify,omitempty" description:"With auto_spawn: skip the plan check (after) stage."`
	HasResearch  bool         `json:"has_research,omitempty" description:"With auto_spawn: research exists already; skip the before stage."`
}

func (planArgs) AmendSchema(s map[string]any) { amendPhase(s) }

type discussArgs struct {
	Phase engine.Phase `json:"phase"`
	Topic string       `json:"topic,omitempty" jsonschema:"maxLength=20000" description:"What to discuss within the phase."`
}

func (discussArgs) AmendSchema(s map[string]any) { amendPhase(s) }

// amendPhase makes phase a name or a number: agents write 2 as often as "2".
func amendPhase(s map[string]any) {
	property(s, "phase")["anyOf"] = []any{
		map[string]any{"type": "string", "minLength": 1, "pattern": safeNamePattern},
		map[string]any{"type": "number"},
	}
	delete(property(s, "phase"), "type")
	property(s, "phase")["description"] = "Phase number or name (1-64 letters, digits, '.', '_' or '-'; never a path)."
}

type stateArgs struct {
	Action  string          `json:"action" jsonschema:"enum=get,enum=set,enum=list,enum=delete" description:"get, set and delete need keyPath; set needs value; list takes an optional keyPath."`
	KeyPath string          `json:"keyPath,omitempty" jsonschema:"maxLength=512" pattern:"^[a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*$" description:"Dot-separated segments (at most 32; not __proto__, prototype or constructor). Top-level currentPhase also sets the current phase."`
	Value   json.RawMessage `json:"value,omitempty" description:"Any JSON value, required for set: at most 64 levels of nesting and 256 KiB of compact JSON."`
}

// AmendSchema admits any JSON value, each kind named (a bare schema would
// say nothing to a client).
func (stateArgs) AmendSchema(s map[string]any) {
	var kinds []any
	for _, k := range []string{"object", "array", "string", "number", "boolean", "null"} {
		kinds = append(kinds, map[string]any{"type": k})
	}
	property(s, "value")["anyOf"] = kinds
}

type validateArgs struct {
	Content string `json:"content" jsonschema:"minLength=1,maxLength=1048576" description:"The document text."`
	Type    string `json:"type,omitempty" jsonschema:"enum=plan,enum=project,enum=requirements,default=plan" description:"plan needs objective, context, tasks, verification, success_criteria; project needs What This Is, Core Value, Requirements; requirements needs v1 Requirements, Out of Scope, Traceability. Each as a <tag> block or a ## heading."`
}

type leaseArgs struct {
	Action  string   `json:"action" jsonschema:"enum=issue,enum=return,enum=list" description:"issue needs taskId; return needs leaseId."`
	TaskID  string   `json:"taskId,omitempty" jsonschema:"minLength=1,maxLength=256" description:"The task the lease covers (for example a task_create id)."`
	Scope   []string `json:"scope,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=256" description:"What the lease holder may touch (files, packages)."`
	LeaseID string   `json:"leaseId,omitempty" pattern:"^L-[1-9][0-9]*$"`
	Result  string   `json:"result,omitempty" jsonschema:"maxLength=20000" description:"Outcome recorded on return; default completed."`
}

type dashArgs struct {
	Format string `json:"format,omitempty" jsonschema:"enum=text,enum=json,default=text"`
}

type evolveArgs struct {
	Action      string `json:"action" jsonschema:"enum=detect,enum=apply,enum=rollback,enum=report" description:"apply and rollback need candidateId; detect and report take an optional scope."`
	Scope       string `json:"scope,omitempty" jsonschema:"enum=all,enum=workflow,enum=doctrine,default=all" description:"doctrine: phases without a plan file; workflow: expired unreturned leases, a project without a state write for 24 h."`
	CandidateID string `json:"candidateId,omitempty" jsonschema:"minLength=1,maxLength=256" description:"An id from detect (apply), or of an applied candidate (rollback)."`
	Force       bool   `json:"force,omitempty" description:"apply: proceed below confidence 0.7 and overwrite an existing plan file."`
}

type agentArgs struct {
	Action           string                 `json:"action" jsonschema:"enum=rules,enum=set_rule,enum=plan,enum=enqueue,enum=queue,enum=complete,enum=history" description:"set_rule needs intent and rule; plan and enqueue need intent; complete needs spawnId and completionStatus; rules takes an optional intent, queue an optional status, history an optional limit."`
	Intent           string                 `json:"intent,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" description:"Built-in intents: plan_phase, execute_phase, debug_issue; set_rule creates others."`
	Options          *engine.SpawnOptions   `json:"options,omitempty" description:"Stage skips: skipResearch or hasResearch drop plan_phase's before stages; skipVerify drops the after stages; planFix false drops debug_issue's."`
	Rule             *engine.SpawnRuleInput `json:"rule,omitempty" description:"Agents per stage, run in the order before, beforeParallel, main, after, afterParallel; at least one agent."`
	Status           string                 `json:"status,omitempty" jsonschema:"enum=pending,enum=completed,enum=failed,enum=skipped" description:"queue: only items with this status."`
	SpawnID          string                 `json:"spawnId,omitempty" jsonschema:"minLength=1,maxLength=256" description:"complete: the queue item, e.g. S-3 (sdd_agent queue lists them); an unknown id is 404."`
	CompletionStatus string                 `json:"completionStatus,omitempty" jsonschema:"enum=completed,enum=failed,enum=skipped"`
	Note             string                 `json:"note,omitempty" jsonschema:"maxLength=20000" description:"complete: what happened."`
	Limit            int                    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=200,default=50" description:"history: the last N events."`
}

// AmendSchema constrains the rule's fields, whose type is the engine's:
// agent ids are safe names, at most 100 per stage.
func (agentArgs) AmendSchema(s map[string]any) {
	rule := property(s, "rule")
	for _, stage := range []string{"before", "beforeParallel", "main", "after", "afterParallel"} {
		list := property(rule, stage)
		list["maxItems"] = 100
		list["items"] = map[string]any{"type": "string", "pattern": safeNamePattern}
	}
	property(rule, "notes")["maxLength"] = 20000
}

type skillArgs struct {
	Action      string               `json:"action" jsonschema:"enum=list,enum=register,enum=bind,enum=unbind,enum=recommend" description:"register needs skillId; bind and unbind need agentId and skillId; recommend needs intent; list takes an optional agentId."`
	SkillID     string               `json:"skillId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Title       *string              `json:"title,omitempty" jsonschema:"maxLength=256"`
	Description *string              `json:"description,omitempty" jsonschema:"maxLength=20000"`
	Tags        []string             `json:"tags,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=256"`
	AgentID     string               `json:"agentId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" description:"An agent id such as sdd-planner."`
	Intent      string               `json:"intent,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Options     *engine.SpawnOptions `json:"options,omitempty" description:"Stage skips: skipResearch or hasResearch drop plan_phase's before stages; skipVerify drops the after stages; planFix false drops debug_issue's."`
}

// property returns the schema of s's property name.
func property(s map[string]any, name string) map[string]any {
	return s["properties"].(map[string]any)[name].(map[string]any)
}
