package sdd

import "github.com/cairn-mcp/cairn/plugins/sdd/engine"

// sdd_agent and sdd_skill answer a different engine type per action; their
// output schemas are derived from these unions of those types' fields,
// each optional because each action fills some.

// agentOutput is what sdd_agent answers, by action.
type agentOutput struct {
	Rules           map[string]engine.SpawnRule `json:"rules,omitempty" description:"rules without intent: the rules by intent."`
	Intents         []string                    `json:"intents,omitempty"`
	Intent          string                      `json:"intent,omitempty"`
	Rule            *engine.SpawnRule           `json:"rule,omitempty"`
	Before          []string                    `json:"before,omitempty"`
	BeforeParallel  []string                    `json:"beforeParallel,omitempty"`
	Main            []string                    `json:"main,omitempty"`
	After           []string                    `json:"after,omitempty"`
	AfterParallel   []string                    `json:"afterParallel,omitempty"`
	Notes           []string                    `json:"notes,omitempty"`
	Options         *engine.SpawnOptions        `json:"options,omitempty"`
	AvailableAgents []string                    `json:"availableAgents,omitempty"`
	Steps           []engine.PlanStep           `json:"steps,omitempty"`
	FlowID          string                      `json:"flowId,omitempty"`
	Plan            *engine.SpawnPlan           `json:"plan,omitempty"`
	QueueItems      []engine.SpawnQueueItem     `json:"queueItems,omitempty"`
	Items           []engine.SpawnQueueItem     `json:"items,omitempty"`
	Count           int                         `json:"count,omitempty"`
	Events          []engine.SpawnHistoryEvent  `json:"events,omitempty"`
	SpawnID         string                      `json:"spawnId,omitempty"`
	Agent           string                      `json:"agent,omitempty"`
	Order           int                         `json:"order,omitempty"`
	Stage           string                      `json:"stage,omitempty"`
	Mode            string                      `json:"mode,omitempty" jsonschema:"enum=sequential,enum=parallel"`
	Status          string                      `json:"status,omitempty"`
	Note            string                      `json:"note,omitempty"`
	SourceTool      string                      `json:"sourceTool,omitempty"`
	CreatedAt       string                      `json:"createdAt,omitempty"`
	CompletedAt     string                      `json:"completedAt,omitempty"`
}

// AmendSchema says which action answers what.
func (agentOutput) AmendSchema(s map[string]any) {
	s["description"] = "By action. rules: {rules, intents}, or {intent, rule} with intent. set_rule: {intent, rule}. plan: the spawn plan {intent, before, beforeParallel, main, after, afterParallel, notes, options, availableAgents, steps}. enqueue: {flowId, plan, queueItems}. queue: {items, count}. complete: the closed queue item. history: {events, count}."
}

// skillOutput is what sdd_skill answers, by action.
type skillOutput struct {
	Registry    []engine.Skill `json:"registry,omitempty"`
	Agents      []any          `json:"agents,omitempty"`
	SkillID     string         `json:"skillId,omitempty"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Tags        []string       `json:"tags,omitempty"`
	CreatedAt   string         `json:"createdAt,omitempty"`
	UpdatedAt   string         `json:"updatedAt,omitempty"`
	AgentID     string         `json:"agentId,omitempty"`
	SkillIDs    []string       `json:"skillIds,omitempty"`
	Skills      []engine.Skill `json:"skills,omitempty"`
	Intent      string         `json:"intent,omitempty"`
}

// AmendSchema says which action answers what, and that agents holds
// objects for list and ids for recommend (one Go type cannot say both).
func (skillOutput) AmendSchema(s map[string]any) {
	s["description"] = "By action. list: {registry, agents[{agentId, skillIds, skills}]}. register: the skill {skillId, title, description, tags, createdAt, updatedAt}. bind, unbind: {agentId, skillIds}. recommend: {intent, agents, skillIds, skills} in plan order."
	if props, ok := s["properties"].(map[string]any); ok {
		props["agents"] = map[string]any{"type": "array", "description": "list: objects {agentId, skillIds, skills}; recommend: agent ids."}
	}
}
