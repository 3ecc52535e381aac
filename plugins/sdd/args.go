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
	Command string `json:"command,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" description:"Id: .agents/commands/ID.md, else bundled."`
}

type planArgs struct {
	Phase        engine.Phase `json:"phase"`
	Context      string       `json:"context,omitempty" jsonschema:"maxLength=20000" description:"Line 1: objective; '- ' lines: tasks (tasks: true files each after the last or its (after 2, 3)); 'success:' lines: criteria."`
	AutoSpawn    bool         `json:"auto_spawn,omitempty" description:"Also queue the plan_phase agent flow."`
	SkipResearch bool         `json:"skip_research,omitempty"`
	SkipVerify   bool         `json:"skip_verify,omitempty"`
	HasResearch  bool         `json:"has_research,omitempty"`
	Tasks        bool         `json:"tasks,omitempty"`
}

func (planArgs) AmendSchema(s map[string]any) { amendPhase(s) }

type discussArgs struct {
	Phase engine.Phase `json:"phase"`
	Topic string       `json:"topic,omitempty" jsonschema:"maxLength=20000"`
}

func (discussArgs) AmendSchema(s map[string]any) { amendPhase(s) }

// amendPhase makes phase a name or a number: agents write 2 as often as "2".
func amendPhase(s map[string]any) {
	property(s, "phase")["anyOf"] = []any{
		map[string]any{"type": "string", "minLength": 1, "pattern": safeNamePattern},
		map[string]any{"type": "number"},
	}
	delete(property(s, "phase"), "type")
}

type stateArgs struct {
	Action  string          `json:"action" jsonschema:"enum=get,enum=set,enum=list,enum=delete" description:"get, set, delete need keyPath; set needs value."`
	KeyPath string          `json:"keyPath,omitempty" jsonschema:"maxLength=512" pattern:"^[a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*$" description:"Dot path, ≤32 segments, none __proto__, prototype, constructor; currentPhase sets the phase."`
	Value   json.RawMessage `json:"value,omitempty" description:"set: any JSON, ≤64 levels deep, ≤256 KiB."`
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
	Content string `json:"content" jsonschema:"minLength=1,maxLength=1048576"`
	Type    string `json:"type,omitempty" jsonschema:"enum=plan,enum=project,enum=requirements,default=plan" description:"Names each missing section (XML tag or ## heading)."`
}

type leaseArgs struct {
	Action  string   `json:"action" jsonschema:"enum=issue,enum=return,enum=list" description:"issue needs taskId; return needs leaseId."`
	TaskID  string   `json:"taskId,omitempty" jsonschema:"minLength=1,maxLength=256"`
	Scope   []string `json:"scope,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=256" description:"Files or packages."`
	LeaseID string   `json:"leaseId,omitempty" pattern:"^L-[1-9][0-9]*$"`
	Result  string   `json:"result,omitempty" jsonschema:"maxLength=20000" description:"return: outcome, default completed."`
}

type dashArgs struct {
	Format string `json:"format,omitempty" jsonschema:"enum=text,enum=json"`
}

type evolveArgs struct {
	Action      string `json:"action" jsonschema:"enum=detect,enum=apply,enum=rollback,enum=report" description:"apply, rollback need candidateId."`
	Scope       string `json:"scope,omitempty" jsonschema:"enum=all,enum=workflow,enum=doctrine,default=all" description:"doctrine: unplanned phases; workflow: stale leases, state."`
	CandidateID string `json:"candidateId,omitempty" jsonschema:"minLength=1,maxLength=256" description:"From detect."`
	Force       bool   `json:"force,omitempty" description:"apply: below 0.7 confidence, overwrite."`
}

type agentArgs struct {
	Action           string                 `json:"action" jsonschema:"enum=rules,enum=set_rule,enum=plan,enum=enqueue,enum=queue,enum=complete,enum=history" description:"set_rule needs intent, rule; plan, enqueue need intent; complete needs spawnId, completionStatus."`
	Intent           string                 `json:"intent,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" description:"plan_phase, execute_phase, debug_issue or a set_rule one."`
	Options          *engine.SpawnOptions   `json:"options,omitempty" description:"planFix false skips the fix stage."`
	Rule             *engine.SpawnRuleInput `json:"rule,omitempty" description:"Agent ids per stage; at least one."`
	Status           string                 `json:"status,omitempty" jsonschema:"enum=pending,enum=completed,enum=failed,enum=skipped"`
	SpawnID          string                 `json:"spawnId,omitempty" jsonschema:"minLength=1,maxLength=256" description:"complete: a queue item (S-3)."`
	CompletionStatus string                 `json:"completionStatus,omitempty" jsonschema:"enum=completed,enum=failed,enum=skipped"`
	Note             string                 `json:"note,omitempty" jsonschema:"maxLength=20000" description:"complete: what happened."`
	Limit            int                    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=200,default=50" description:"history: last N events."`
}

// AmendSchema constrains the rule's fields, whose type is the engine's:
// agent ids are safe names, at most 100 per stage. The safe name and the
// stage list are defined once and referenced, six uses of one rule
// (docs/decisions.md D37).
func (agentArgs) AmendSchema(s map[string]any) {
	s["$defs"] = map[string]any{
		"name":   map[string]any{"type": "string", "pattern": safeNamePattern},
		"agents": map[string]any{"type": "array", "maxItems": 100, "items": map[string]any{"$ref": "#/$defs/name"}},
	}
	intent := property(s, "intent")
	delete(intent, "type")
	delete(intent, "pattern")
	intent["$ref"] = "#/$defs/name"
	rule := property(s, "rule")
	for _, stage := range []string{"before", "beforeParallel", "main", "after", "afterParallel"} {
		rule["properties"].(map[string]any)[stage] = map[string]any{"$ref": "#/$defs/agents"}
	}
	property(rule, "notes")["maxLength"] = 20000
}

type skillArgs struct {
	Action      string               `json:"action" jsonschema:"enum=list,enum=register,enum=bind,enum=unbind,enum=recommend" description:"register needs skillId; bind, unbind need agentId, skillId; recommend needs intent."`
	SkillID     string               `json:"skillId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Title       *string              `json:"title,omitempty" jsonschema:"maxLength=256"`
	Description *string              `json:"description,omitempty" jsonschema:"maxLength=20000"`
	Tags        []string             `json:"tags,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=256"`
	AgentID     string               `json:"agentId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Intent      string               `json:"intent,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Options     *engine.SpawnOptions `json:"options,omitempty" description:"recommend: sdd_agent's stage skips."`
}

// AmendSchema defines the safe name once for its three uses
// (docs/decisions.md D37).
func (skillArgs) AmendSchema(s map[string]any) {
	s["$defs"] = map[string]any{"name": map[string]any{"type": "string", "pattern": safeNamePattern}}
	for _, name := range []string{"skillId", "agentId", "intent"} {
		p := property(s, name)
		delete(p, "type")
		delete(p, "pattern")
		p["$ref"] = "#/$defs/name"
	}
}

// property returns the schema of s's property name.
func property(s map[string]any, name string) map[string]any {
	return s["properties"].(map[string]any)[name].(map[string]any)
}
