package engine

import (
	"encoding/json"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"sort"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Built-in intents (D17).
const (
	IntentPlanPhase    = "plan_phase"
	IntentExecutePhase = "execute_phase"
	IntentDebugIssue   = "debug_issue"
)

// Spawn queue item statuses.
const (
	SpawnPending   = "pending"
	SpawnCompleted = "completed"
	SpawnFailed    = "failed"
	SpawnSkipped   = "skipped"
)

// History event kinds.
const (
	HistoryQueued    = "queued"
	HistoryCompleted = "completed"
	HistoryRuleSet   = "rule_set"
)

// SpawnRule lists the agents of each stage of an intent's flow.
type SpawnRule struct {
	Before         []string `json:"before"`
	BeforeParallel []string `json:"beforeParallel"`
	Main           []string `json:"main"`
	After          []string `json:"after"`
	AfterParallel  []string `json:"afterParallel"`
	Notes          string   `json:"notes,omitempty"`
}

// SpawnRuleInput is SetSpawnRule's rule; nil stages are stored empty.
type SpawnRuleInput struct {
	Before         []string `json:"before,omitempty"`
	BeforeParallel []string `json:"beforeParallel,omitempty"`
	Main           []string `json:"main,omitempty"`
	After          []string `json:"after,omitempty"`
	AfterParallel  []string `json:"afterParallel,omitempty"`
	Notes          string   `json:"notes,omitempty"`
}

// SpawnOptions are the stage-skipping flags. PlanFix is a pointer because
// the debug_issue rule skips the after stage only when it is explicitly
// false; absent means "plan the fix".
type SpawnOptions struct {
	SkipResearch bool  `json:"skipResearch,omitempty"`
	SkipVerify   bool  `json:"skipVerify,omitempty"`
	HasResearch  bool  `json:"hasResearch,omitempty"`
	PlanFix      *bool `json:"planFix,omitempty"`
}

// SpawnPlan is a resolved plan: the rule's stages after the skipping rules.
type SpawnPlan struct {
	Intent          string       `json:"intent"`
	Before          []string     `json:"before"`
	BeforeParallel  []string     `json:"beforeParallel"`
	Main            []string     `json:"main"`
	After           []string     `json:"after"`
	AfterParallel   []string     `json:"afterParallel"`
	Notes           []string     `json:"notes"`
	Options         SpawnOptions `json:"options"`
	AvailableAgents []string     `json:"availableAgents"`
	Steps           []PlanStep   `json:"steps"`
}

// PlanStep is one step of a flattened plan.
type PlanStep struct {
	Order int    `json:"order"`
	Agent string `json:"agent"`
	Stage string `json:"stage"`
	Mode  string `json:"mode" jsonschema:"enum=sequential,enum=parallel"`
}

// SpawnQueueItem is one queued agent spawn.
type SpawnQueueItem struct {
	SpawnID     string `json:"spawnId"`
	FlowID      string `json:"flowId"`
	Intent      string `json:"intent"`
	Agent       string `json:"agent"`
	Order       int    `json:"order"`
	Stage       string `json:"stage" jsonschema:"enum=before,enum=main,enum=after"`
	Mode        string `json:"mode" jsonschema:"enum=sequential,enum=parallel"`
	Status      string `json:"status" jsonschema:"enum=pending,enum=completed,enum=failed,enum=skipped"`
	Note        string `json:"note"`
	SourceTool  string `json:"sourceTool,omitempty"`
	CreatedAt   string `json:"createdAt"`
	CompletedAt string `json:"completedAt,omitempty"`
}

// SpawnHistoryEvent records queueing, completion and rule changes.
type SpawnHistoryEvent struct {
	Kind    string         `json:"kind" jsonschema:"enum=queued,enum=completed,enum=rule_set"`
	Intent  string         `json:"intent"`
	FlowID  string         `json:"flowId,omitempty"`
	Details map[string]any `json:"details"`
	At      string         `json:"at"`
}

// SpawnSource tells where a queued flow came from.
type SpawnSource struct {
	SourceTool string `json:"sourceTool,omitempty"`
}

// QueueResult is QueueAgentSpawnPlan's result.
type QueueResult struct {
	FlowID     string           `json:"flowId"`
	Plan       SpawnPlan        `json:"plan"`
	QueueItems []SpawnQueueItem `json:"queueItems"`
}

// RuleResult is SetSpawnRule's result.
type RuleResult struct {
	Intent string    `json:"intent"`
	Rule   SpawnRule `json:"rule"`
}

func defaultSpawnRules() map[string]SpawnRule {
	return map[string]SpawnRule{
		IntentPlanPhase: {
			Before: []string{"sdd-phase-researcher"}, Main: []string{"sdd-planner"}, After: []string{"sdd-plan-checker"},
			BeforeParallel: []string{}, AfterParallel: []string{},
			Notes: "Research the phase, write the plan, then check it against the doctrine.",
		},
		IntentExecutePhase: {
			Main: []string{"sdd-executor"}, After: []string{"sdd-verifier"},
			Before: []string{}, BeforeParallel: []string{}, AfterParallel: []string{},
			Notes: "Execute the plan's tasks, then verify the result against the success criteria.",
		},
		IntentDebugIssue: {
			Main: []string{"sdd-debugger"}, After: []string{"sdd-planner"},
			Before: []string{}, BeforeParallel: []string{}, AfterParallel: []string{},
			Notes: "Find the root cause, then plan the fix.",
		},
	}
}

// SpawnRules returns all stored rules by intent.
func (e *Engine) SpawnRules() (map[string]SpawnRule, error) {
	out := map[string]SpawnRule{}
	err := e.read(func(s *state, _ time.Time) error {
		for k, r := range s.Agents.SpawnRules {
			out[k] = copyRule(r)
		}
		return nil
	})
	return out, err
}

func copyRule(r SpawnRule) SpawnRule {
	c := func(v []string) []string { return append([]string{}, v...) }
	return SpawnRule{c(r.Before), c(r.BeforeParallel), c(r.Main), c(r.After), c(r.AfterParallel), r.Notes}
}

// SetSpawnRule creates or replaces the rule of an intent (an unknown intent
// is created) and records a rule_set history event.
func (e *Engine) SetSpawnRule(intent string, in SpawnRuleInput) (*RuleResult, error) {
	return e.setSpawnRule(Call{}, intent, in)
}

func (e *Engine) setSpawnRule(c Call, intent string, in SpawnRuleInput) (*RuleResult, error) {
	if err := checkName("intent", intent); err != nil {
		return nil, err
	}
	stages := []struct {
		name   string
		agents []string
	}{{"rule.before", in.Before}, {"rule.beforeParallel", in.BeforeParallel}, {"rule.main", in.Main}, {"rule.after", in.After}, {"rule.afterParallel", in.AfterParallel}}
	total := 0
	for _, st := range stages {
		if len(st.agents) > maxListItems {
			return nil, errs.Invalidf(st.name, "maxItems", "%s may list at most %d agents", st.name, maxListItems)
		}
		for i, a := range st.agents {
			if err := checkName(fmt.Sprintf("%s[%d]", st.name, i), a); err != nil {
				return nil, err
			}
		}
		total += len(st.agents)
	}
	if total == 0 {
		return nil, errs.Invalid("rule", "minItems", "rule must name at least one agent in before, beforeParallel, main, after or afterParallel")
	}
	if err := checkText("rule.notes", in.Notes, false, maxTextLen); err != nil {
		return nil, err
	}
	rule := copyRule(SpawnRule(in))
	k := keyFor(c, "agent.set_rule", map[string]any{"intent": intent, "rule": rule})
	_, _, err := writeKeyed(e, k, func(s *state, now time.Time, _ func(string, any)) (bool, error) {
		_, existed := s.Agents.SpawnRules[intent]
		s.Agents.SpawnRules[intent] = rule
		s.Agents.SpawnHistory = append(s.Agents.SpawnHistory, SpawnHistoryEvent{
			Kind: HistoryRuleSet, Intent: intent, At: iso(now),
			Details: map[string]any{"rule": copyRule(rule), "replaced": existed},
		})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return &RuleResult{Intent: intent, Rule: copyRule(rule)}, nil
}

// ResolveAgentSpawnPlan resolves the stored rule of intent with the five
// stage-skipping rules. An intent without a rule is 404 ERR_NOT_FOUND:
// queueing an empty flow would silently do nothing, which helps no agent.
func (e *Engine) ResolveAgentSpawnPlan(intent string, opts SpawnOptions) (*SpawnPlan, error) {
	if err := checkName("intent", intent); err != nil {
		return nil, err
	}
	var plan *SpawnPlan
	err := e.read(func(s *state, _ time.Time) error {
		var err error
		plan, err = e.resolveLocked(s, intent, opts)
		return err
	})
	return plan, err
}

func (e *Engine) resolveLocked(s *state, intent string, opts SpawnOptions) (*SpawnPlan, error) {
	rule, ok := s.Agents.SpawnRules[intent]
	if !ok {
		return nil, errs.NotFoundf(errs.NotFound, "intent",
			"no spawn rule for intent %q; known intents: %v; create one with sdd_agent set_rule", intent, sortedKeys(s.Agents.SpawnRules))
	}
	p := ResolvePlan(intent, rule, opts)
	p.AvailableAgents = e.agentIDs()
	return &p, nil
}

// ResolvePlan applies the stage-skipping rules to a rule and flattens the
// result. It is pure, so the rules can be tested in isolation:
//
//   - plan_phase: before and beforeParallel skipped when skipResearch or
//     hasResearch is set;
//   - plan_phase: after and afterParallel skipped when skipVerify is set;
//   - execute_phase: after and afterParallel skipped when skipVerify is set;
//   - debug_issue: after and afterParallel skipped when planFix is false.
func ResolvePlan(intent string, rule SpawnRule, opts SpawnOptions) SpawnPlan {
	r := copyRule(rule)
	p := SpawnPlan{Intent: intent, Options: opts, Notes: []string{}, AvailableAgents: []string{}}
	if rule.Notes != "" {
		p.Notes = append(p.Notes, rule.Notes)
	}
	skipBefore := intent == IntentPlanPhase && (opts.SkipResearch || opts.HasResearch)
	skipAfter := (intent == IntentPlanPhase || intent == IntentExecutePhase) && opts.SkipVerify
	skipAfter = skipAfter || (intent == IntentDebugIssue && opts.PlanFix != nil && !*opts.PlanFix)
	if skipBefore && len(r.Before)+len(r.BeforeParallel) > 0 {
		p.Notes = append(p.Notes, "before stages skipped: research skipped or already available")
		r.Before, r.BeforeParallel = []string{}, []string{}
	}
	if skipAfter && len(r.After)+len(r.AfterParallel) > 0 {
		if intent == IntentDebugIssue {
			p.Notes = append(p.Notes, "after stages skipped: planFix is false")
		} else {
			p.Notes = append(p.Notes, "after stages skipped: skipVerify is set")
		}
		r.After, r.AfterParallel = []string{}, []string{}
	}
	p.Before, p.BeforeParallel, p.Main, p.After, p.AfterParallel = r.Before, r.BeforeParallel, r.Main, r.After, r.AfterParallel
	p.Steps = Flatten(p)
	return p
}

// Flatten assigns a running order from 1 across the stages before,
// beforeParallel, main, after, afterParallel; every agent takes its own
// number. Sequential stages have mode sequential, parallel stages mode
// parallel; stage names collapse to before, main, after.
func Flatten(p SpawnPlan) []PlanStep {
	steps := []PlanStep{}
	add := func(agents []string, stage, mode string) {
		for _, a := range agents {
			steps = append(steps, PlanStep{Order: len(steps) + 1, Agent: a, Stage: stage, Mode: mode})
		}
	}
	add(p.Before, "before", "sequential")
	add(p.BeforeParallel, "before", "parallel")
	add(p.Main, "main", "sequential")
	add(p.After, "after", "sequential")
	add(p.AfterParallel, "after", "parallel")
	return steps
}

// QueueAgentSpawnPlan resolves and flattens the plan of intent, appends one
// pending queue item per step, records a queued history event and persists.
func (e *Engine) QueueAgentSpawnPlan(intent string, opts SpawnOptions, src SpawnSource) (*QueueResult, error) {
	return e.queueAgentSpawnPlan(Call{Tool: src.SourceTool}, intent, opts)
}

// queueAgentSpawnPlan is QueueAgentSpawnPlan under c: c.Tool is the
// source tool, c.Idem the idempotency key.
func (e *Engine) queueAgentSpawnPlan(c Call, intent string, opts SpawnOptions) (*QueueResult, error) {
	src := SpawnSource{SourceTool: c.Tool}
	k := keyFor(c, "agent.enqueue", map[string]any{"intent": intent, "options": opts, "source": src})
	var recorded json.RawMessage
	q, err := e.queueFlow(k, &recorded, src, intent, opts, nil)
	if err != nil || recorded == nil {
		return q, err
	}
	var out QueueResult
	if err := json.Unmarshal(recorded, &out); err != nil {
		return nil, errs.Newf(500, errs.Internal, "cannot decode a recorded outcome: %v", err)
	}
	return &out, nil
}

// queueFlow queues the plan of intent in one write; with a key it records
// outcome(result) (the result itself when outcome is nil) under k, or
// stores an already recorded outcome in *recorded without writing.
func (e *Engine) queueFlow(k idempotency.Key, recorded *json.RawMessage, src SpawnSource, intent string, opts SpawnOptions, outcome func(QueueResult) any) (*QueueResult, error) {
	if err := checkName("intent", intent); err != nil {
		return nil, err
	}
	if err := checkText("sourceTool", src.SourceTool, false, maxShortText); err != nil {
		return nil, err
	}
	var out QueueResult
	err := e.commit(k, recorded, func(s *state, now time.Time, emit func(string, any)) (any, error) {
		plan, err := e.resolveLocked(s, intent, opts)
		if err != nil {
			return nil, err
		}
		flow := fmt.Sprintf("F-%d", s.next("flow"))
		items := make([]SpawnQueueItem, 0, len(plan.Steps))
		for _, st := range plan.Steps {
			items = append(items, SpawnQueueItem{
				SpawnID: fmt.Sprintf("S-%d", s.next("spawn")), FlowID: flow, Intent: intent,
				Agent: st.Agent, Order: st.Order, Stage: st.Stage, Mode: st.Mode,
				Status: SpawnPending, SourceTool: src.SourceTool, CreatedAt: iso(now),
			})
		}
		s.Agents.SpawnQueue = append(s.Agents.SpawnQueue, items...)
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.SpawnID
		}
		s.Agents.SpawnHistory = append(s.Agents.SpawnHistory, SpawnHistoryEvent{
			Kind: HistoryQueued, Intent: intent, FlowID: flow, At: iso(now),
			Details: map[string]any{"spawnIds": ids, "steps": len(items), "options": opts, "sourceTool": src.SourceTool},
		})
		out = QueueResult{FlowID: flow, Plan: *plan, QueueItems: items}
		emit(EventSpawnQueued, out)
		if outcome != nil {
			return outcome(out), nil
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSpawnQueue lists queue items in queue order, optionally only those
// with status.
func (e *Engine) ListSpawnQueue(status string) ([]SpawnQueueItem, error) {
	if status != "" && !validSpawnStatus(status, true) {
		return nil, errs.Invalidf("status", "enum", "status must be pending, completed, failed or skipped, not %q", status)
	}
	out := []SpawnQueueItem{}
	err := e.read(func(s *state, _ time.Time) error {
		for _, q := range s.Agents.SpawnQueue {
			if status == "" || q.Status == status {
				out = append(out, q)
			}
		}
		return nil
	})
	return out, err
}

func validSpawnStatus(s string, allowPending bool) bool {
	switch s {
	case SpawnCompleted, SpawnFailed, SpawnSkipped:
		return true
	case SpawnPending:
		return allowPending
	}
	return false
}

// CompleteSpawnQueueItem closes a pending item with status completed,
// failed or skipped and a note. It returns nil (no error) for an unknown
// spawn id, as the specification says; closing an item that is already
// closed is a 409 conflict, because silently rewriting a recorded outcome
// would falsify the history.
func (e *Engine) CompleteSpawnQueueItem(spawnID, status, note string) (*SpawnQueueItem, error) {
	return e.completeSpawnQueueItem(Call{}, spawnID, status, note)
}

func (e *Engine) completeSpawnQueueItem(c Call, spawnID, status, note string) (*SpawnQueueItem, error) {
	if err := checkText("spawnId", spawnID, true, maxShortText); err != nil {
		return nil, err
	}
	if !validSpawnStatus(status, false) {
		return nil, errs.Invalidf("completionStatus", "enum", "completion status must be completed, failed or skipped, not %q", status)
	}
	if err := checkText("note", note, false, maxTextLen); err != nil {
		return nil, err
	}
	k := keyFor(c, "agent.complete", map[string]any{"spawnId": spawnID, "status": status, "note": note})
	out, _, err := writeKeyed(e, k, func(s *state, now time.Time, emit func(string, any)) (*SpawnQueueItem, error) {
		for i := range s.Agents.SpawnQueue {
			q := &s.Agents.SpawnQueue[i]
			if q.SpawnID != spawnID {
				continue
			}
			if q.Status != SpawnPending {
				return nil, errs.Conflictf(errs.Conflict, "spawn %s is already %s; only pending items can be completed", spawnID, q.Status).
					With("field", "spawnId").With("constraint", "pending")
			}
			q.Status, q.Note, q.CompletedAt = status, note, iso(now)
			c := *q
			s.Agents.SpawnHistory = append(s.Agents.SpawnHistory, SpawnHistoryEvent{
				Kind: HistoryCompleted, Intent: q.Intent, FlowID: q.FlowID, At: iso(now),
				Details: map[string]any{"spawnId": q.SpawnID, "agent": q.Agent, "status": status, "note": note},
			})
			emit(EventSpawnCompleted, c)
			return &c, nil
		}
		return nil, errUnchanged
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListSpawnHistory returns the last limit events, oldest first; limit 0
// means DefaultHistoryLimit, and it must be at most MaxHistoryLimit.
func (e *Engine) ListSpawnHistory(limit int) ([]SpawnHistoryEvent, error) {
	if limit == 0 {
		limit = DefaultHistoryLimit
	}
	if limit < 1 || limit > MaxHistoryLimit {
		return nil, errs.Invalidf("limit", "range", "limit must be between 1 and %d", MaxHistoryLimit)
	}
	var out []SpawnHistoryEvent
	err := e.read(func(s *state, _ time.Time) error {
		h := s.Agents.SpawnHistory
		if len(h) > limit {
			h = h[len(h)-limit:]
		}
		out = append([]SpawnHistoryEvent{}, h...)
		return nil
	})
	return out, err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
