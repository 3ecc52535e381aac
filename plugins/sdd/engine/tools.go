package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// Phase is a phase name that accepts a JSON string or number (the
// specification allows both); it is kept exactly as written.
type Phase string

// UnmarshalJSON accepts "3", 3 or "phase-a".
func (p *Phase) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*p = Phase(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errs.Invalid("phase", "type", "phase must be a string or a number")
	}
	*p = Phase(n.String())
	return nil
}

// VitalsInput is sdd_vitals's input.
type VitalsInput struct {
	Command string `json:"command,omitempty"`
}

// PlanInput is sdd_plan's input.
type PlanInput struct {
	Phase        Phase  `json:"phase"`
	Context      string `json:"context,omitempty"`
	AutoSpawn    bool   `json:"auto_spawn,omitempty"`
	SkipResearch bool   `json:"skip_research,omitempty"`
	SkipVerify   bool   `json:"skip_verify,omitempty"`
	HasResearch  bool   `json:"has_research,omitempty"`
	// Tasks makes the plan's items tasks on the caller's task board
	// (Call.Tasks), in the caller's session project.
	Tasks bool `json:"tasks,omitempty"`
}

// DiscussInput is sdd_discuss's input.
type DiscussInput struct {
	Phase Phase  `json:"phase"`
	Topic string `json:"topic,omitempty"`
}

// StateInput is sdd_state's input. Value is raw JSON; nil means absent.
type StateInput struct {
	Action  string          `json:"action"`
	KeyPath string          `json:"keyPath,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
}

// ValidateInput is sdd_validate's input.
type ValidateInput struct {
	Content string `json:"content"`
	Type    string `json:"type,omitempty"`
}

// LeaseInput is sdd_lease's input.
type LeaseInput struct {
	Action  string   `json:"action"`
	TaskID  string   `json:"taskId,omitempty"`
	Scope   []string `json:"scope,omitempty"`
	LeaseID string   `json:"leaseId,omitempty"`
	Result  string   `json:"result,omitempty"`
}

// DashInput is sdd_dash's input.
type DashInput struct {
	Format string `json:"format,omitempty"`
}

// EvolveInput is sdd_evolve's input.
type EvolveInput struct {
	Action      string `json:"action"`
	Scope       string `json:"scope,omitempty"`
	CandidateID string `json:"candidateId,omitempty"`
	Force       bool   `json:"force,omitempty"`
}

// AgentInput is sdd_agent's input.
type AgentInput struct {
	Action           string          `json:"action"`
	Intent           string          `json:"intent,omitempty"`
	Options          *SpawnOptions   `json:"options,omitempty"`
	Rule             *SpawnRuleInput `json:"rule,omitempty"`
	Status           string          `json:"status,omitempty"`
	SpawnID          string          `json:"spawnId,omitempty"`
	CompletionStatus string          `json:"completionStatus,omitempty"`
	Note             string          `json:"note,omitempty"`
	Limit            int             `json:"limit,omitempty"`
}

// SkillInput is sdd_skill's input.
type SkillInput struct {
	Action      string        `json:"action"`
	SkillID     string        `json:"skillId,omitempty"`
	Title       *string       `json:"title,omitempty"`
	Description *string       `json:"description,omitempty"`
	Tags        []string      `json:"tags,omitempty"`
	AgentID     string        `json:"agentId,omitempty"`
	Intent      string        `json:"intent,omitempty"`
	Options     *SpawnOptions `json:"options,omitempty"`
}

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return errs.Invalidf(field, "required", "%s is required for this action", field)
	}
	return nil
}

func badAction(action string, allowed ...string) error {
	if action == "" {
		return errs.Invalidf("action", "required", "an action is required: one of %s", strings.Join(allowed, ", "))
	}
	return errs.Invalidf("action", "enum", "action must be one of %s, not %q", strings.Join(allowed, ", "), action)
}

func opts(o *SpawnOptions) SpawnOptions {
	if o == nil {
		return SpawnOptions{}
	}
	return *o
}

// VitalsResult is sdd_vitals's structured result: the Markdown and the
// parsed command vitals it was rendered from.
type VitalsResult struct {
	Text   string         `json:"text" description:"Markdown: health, status, phase, active lease count and the command's sections."`
	Vitals *CommandVitals `json:"vitals"`
}

// VitalsTool implements sdd_vitals. Without a command it shows plan-phase
// when no phase has been planned yet, else execute-phase.
func (e *Engine) VitalsTool(in VitalsInput) (*VitalsResult, error) {
	cmd := in.Command
	if cmd == "" {
		cmd = "plan-phase"
		if st, err := e.GetStats(); err == nil && st.CurrentPhase != "" {
			cmd = "execute-phase"
		}
	}
	v, err := e.GetCommandVitals(cmd)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# SDD Vitals: %s\n\n", v.Command)
	phase := v.State.Phase
	if phase == "" {
		phase = "none"
	}
	fmt.Fprintf(&b, "- Health: %s\n- Status: %s\n- Phase: %s\n- Active leases: %d\n- Command source: %s", v.Health.Status, v.State.Status, phase, v.State.ActiveLeases, v.Source)
	if v.Path != "" {
		fmt.Fprintf(&b, " (%s)", v.Path)
	}
	b.WriteString("\n")
	for _, p := range v.Health.Problems {
		fmt.Fprintf(&b, "- Problem: %s\n", p)
	}
	if v.Synthetic {
		b.WriteString("- Synthetic: yes (no command file found)\n")
	}
	for _, sec := range []struct{ title, body string }{
		{"Objective", v.Sections.Objective}, {"Context", v.Sections.Context}, {"Process", v.Sections.Process},
		{"Constraints", v.Sections.Constraints}, {"Tasks", v.Sections.Tasks}, {"Success Checks", v.Sections.SuccessChecks},
	} {
		if sec.body != "" {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", sec.title, sec.body)
		}
	}
	return &VitalsResult{Text: b.String(), Vitals: v}, nil
}

// PlanToolResult is sdd_plan's structured result: the Markdown (plan plus
// the spawn-flow summary), the plan file and, with auto_spawn, the queued
// flow.
type PlanToolResult struct {
	Text  string       `json:"text" description:"The plan Markdown, then where it was written and, with auto_spawn, the spawn-flow summary."`
	Phase string       `json:"phase"`
	Path  string       `json:"path" description:"Root-relative plan file: .planning/PLAN-phase-<phase>.md."`
	Flow  *QueueResult `json:"flow,omitempty" description:"With auto_spawn: the queued plan_phase flow."`
	Tasks []PlanTask   `json:"tasks,omitempty" description:"With tasks: the task each plan item became, in order, and the tasks it depends on."`
}

// PlanTool implements sdd_plan: writes the plan; with tasks it makes each
// plan item a task on c.Tasks (plan_tasks.go); with auto_spawn it also
// queues the plan_phase flow (source c.Tool) and appends a spawn-flow
// summary. It honours c.Idem: the last state write of the call (the phase
// record, the queued flow, or the record of the tasks made) records the
// answer, and a recorded key gets it back without writing the plan again
// or making any task.
func (e *Engine) PlanTool(c Call, in PlanInput) (*PlanToolResult, error) {
	if err := required("phase", string(in.Phase)); err != nil {
		return nil, err
	}
	phase := string(in.Phase)
	if err := CheckPhase(phase); err != nil {
		return nil, err
	}
	if err := checkText("context", in.Context, false, maxTextLen); err != nil {
		return nil, err
	}
	var items []PlanItem
	if in.Tasks {
		if c.Tasks == nil {
			return nil, errs.New(503, errs.Unavailable, "no task board is reachable here: sdd_plan with tasks needs the core area's tools").With("field", "tasks")
		}
		var err error
		if items, err = planItems(in.Context); err != nil {
			return nil, err
		}
	}
	k := keyFor(c, "plan", in)
	replayed := func(raw json.RawMessage) (*PlanToolResult, error) {
		var out PlanToolResult
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, errs.Newf(500, errs.Internal, "cannot decode a recorded outcome: %v", err)
		}
		return &out, nil
	}
	raw, ok, err := e.recordedCall(k)
	if err != nil {
		return nil, err
	}
	if ok {
		return replayed(raw)
	}
	// A concurrent call with the same key may record first; its answer
	// then comes back in raw.
	raw = nil
	if in.Tasks {
		return e.planWithTasks(c, k, in, items)
	}
	if !in.AutoSpawn {
		res, _, err := e.writePlanRecorded(c.Actor, phase, in.Context, true, k, &raw, func(res *PlanResult) any { return planOutput(res, nil) })
		if err != nil {
			return nil, err
		}
		if raw != nil {
			return replayed(raw)
		}
		return planOutput(res, nil), nil
	}
	res, _, err := e.writePlan(c.Actor, phase, in.Context, true, idempotency.Key{}, nil)
	if err != nil {
		return nil, err
	}
	opts := SpawnOptions{SkipResearch: in.SkipResearch, SkipVerify: in.SkipVerify, HasResearch: in.HasResearch}
	q, err := e.queueFlow(k, &raw, SpawnSource{SourceTool: c.Tool}, IntentPlanPhase, opts, func(q QueueResult) any { return planOutput(res, &q) })
	if err != nil {
		return nil, err
	}
	if raw != nil {
		return replayed(raw)
	}
	return planOutput(res, q), nil
}

// planWithTasks is PlanTool with tasks: it writes the plan, makes its
// items tasks, and then records the answer under k (with the queued flow,
// under auto_spawn). A call that failed part way is made whole by the
// same call again: the board makes each item's task once.
func (e *Engine) planWithTasks(c Call, k idempotency.Key, in PlanInput, items []PlanItem) (*PlanToolResult, error) {
	phase := string(in.Phase)
	res, _, err := e.writePlan(c.Actor, phase, in.Context, true, idempotency.Key{}, nil)
	if err != nil {
		return nil, err
	}
	made, err := makePlanTasks(c.Tasks, phase, res.Path, items)
	if err != nil {
		return nil, err
	}
	answer := func(q *QueueResult) *PlanToolResult {
		out := planOutput(res, q)
		out.Tasks = made
		out.Text += tasksText(made)
		return out
	}
	if in.AutoSpawn {
		opts := SpawnOptions{SkipResearch: in.SkipResearch, SkipVerify: in.SkipVerify, HasResearch: in.HasResearch}
		var raw json.RawMessage
		q, err := e.queueFlow(k, &raw, SpawnSource{SourceTool: c.Tool}, IntentPlanPhase, opts, func(q QueueResult) any { return answer(&q) })
		if err != nil {
			return nil, err
		}
		if raw != nil {
			var out PlanToolResult
			if err := json.Unmarshal(raw, &out); err != nil {
				return nil, errs.Newf(500, errs.Internal, "cannot decode a recorded outcome: %v", err)
			}
			return &out, nil
		}
		return answer(q), nil
	}
	if !k.Keyed() {
		return answer(nil), nil
	}
	out, _, err := writeKeyed(e, k, func(*state, time.Time, func(string, any)) (*PlanToolResult, error) {
		return answer(nil), nil
	})
	return out, err
}

// tasksText lists the tasks a plan's items became, for the answer's text.
func tasksText(made []PlanTask) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Tasks (%d)\n\n", len(made))
	for _, t := range made {
		after := ""
		if len(t.DependsOn) > 0 {
			after = " after " + strings.Join(t.DependsOn, ", ")
		}
		fmt.Fprintf(&b, "- item %d: %s%s\n", t.Item, t.TaskID, after)
	}
	return b.String()
}

// planOutput renders sdd_plan's answer from the written plan and the
// queued flow (nil without auto_spawn).
func planOutput(res *PlanResult, q *QueueResult) *PlanToolResult {
	out := &PlanToolResult{Phase: res.Phase, Path: res.Path}
	text := res.Markdown + fmt.Sprintf("\n---\nPlan written to %s.\n", res.Path)
	if q == nil {
		out.Text = text
		return out
	}
	var b strings.Builder
	b.WriteString(text)
	fmt.Fprintf(&b, "\n## Spawn Flow %s (%s)\n\n", q.FlowID, q.Plan.Intent)
	for _, it := range q.QueueItems {
		fmt.Fprintf(&b, "%d. %s: %s (%s, %s)\n", it.Order, it.SpawnID, it.Agent, it.Stage, it.Mode)
	}
	for _, n := range q.Plan.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	b.WriteString("\nRun each agent in order, then close its item with sdd_agent complete (spawnId, completionStatus).\n")
	out.Text, out.Flow = b.String(), q
	return out
}

// DiscussTool implements sdd_discuss.
func (e *Engine) DiscussTool(in DiscussInput) (string, error) {
	if err := required("phase", string(in.Phase)); err != nil {
		return "", err
	}
	return e.GenerateDiscussion(string(in.Phase), in.Topic)
}

// StateResult is sdd_state's structured result. Found says whether a value
// was stored at keyPath (get, list with keyPath, delete: before deleting);
// Value is the stored JSON (get, list, set).
type StateResult struct {
	Text    string          `json:"text" description:"get/list: the value as JSON (indented when small), or a 'No value is stored' line; set/delete: a confirmation line."`
	Action  string          `json:"action" jsonschema:"enum=get,enum=set,enum=list,enum=delete"`
	KeyPath string          `json:"keyPath,omitempty"`
	Found   bool            `json:"found" description:"get/list: a value exists at keyPath; set: true; delete: something was deleted."`
	Value   json.RawMessage `json:"value,omitempty" description:"get/list/set: the stored JSON value (the whole tree for list without keyPath)."`
}

// StateTool implements sdd_state: get (keyPath) returns the value as JSON
// or a plain-text "not set" line; set (keyPath, value); delete (keyPath);
// list (optional keyPath) returns the stored tree as JSON. set and delete
// honour c.Idem.
func (e *Engine) StateTool(c Call, in StateInput) (*StateResult, error) {
	out := &StateResult{Action: in.Action, KeyPath: in.KeyPath}
	switch in.Action {
	case "get", "list":
		if in.Action == "get" {
			if err := required("keyPath", in.KeyPath); err != nil {
				return nil, err
			}
		}
		var v any
		if in.KeyPath == "" {
			all, err := e.StateValues()
			if err != nil {
				return nil, err
			}
			v, out.Found = all, true
		} else {
			var err error
			if v, out.Found, err = e.GetStateValue(in.KeyPath); err != nil {
				return nil, err
			}
		}
		if !out.Found {
			out.Text = fmt.Sprintf("No value is stored at %s.", in.KeyPath)
			return out, nil
		}
		out.Value = rawJSON(v)
		out.Text = readableJSON(out.Value)
		return out, nil
	case "set":
		if err := required("keyPath", in.KeyPath); err != nil {
			return nil, err
		}
		if len(in.Value) == 0 {
			return nil, errs.Invalid("value", "required", "value is required for set (any JSON value; use delete to remove a key)")
		}
		// The depth is checked on the raw text before anything decodes it.
		if depth, err := jsonDepth(in.Value, MaxValueDepth); err != nil {
			return nil, errs.Invalidf("value", "maxDepth", "value nests more than %d levels deep (at least %d); store a flatter value", MaxValueDepth, depth).
				With("limit", MaxValueDepth)
		}
		// And the size, before decoding builds a tree many times larger.
		if size, ok := encodedLen(in.Value); ok && size > MaxValueBytes {
			return nil, errValueTooLarge(size)
		}
		v, err := decodeGeneric(in.Value)
		if err != nil {
			return nil, err
		}
		if _, err := e.setStateValue(c, in.KeyPath, v); err != nil {
			return nil, err
		}
		out.Text = fmt.Sprintf("Stored %s = %s", in.KeyPath, compact(v))
		out.Found, out.Value = true, rawJSON(v)
		return out, nil
	case "delete":
		if err := required("keyPath", in.KeyPath); err != nil {
			return nil, err
		}
		ok, err := e.deleteStateValue(c, in.KeyPath)
		if err != nil {
			return nil, err
		}
		out.Found = ok
		if !ok {
			out.Text = fmt.Sprintf("Nothing was stored at %s.", in.KeyPath)
		} else {
			out.Text = fmt.Sprintf("Deleted %s.", in.KeyPath)
		}
		return out, nil
	}
	return nil, badAction(in.Action, "get", "set", "list", "delete")
}

// rawJSON encodes a stored value (already in generic JSON form).
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// maxIndentedText is the largest text shown indented; indentation costs up
// to two bytes per level per line, so larger values are shown compact.
const maxIndentedText = 64 << 10

// readableJSON indents small JSON for reading and leaves large JSON
// compact, so the text never grows far beyond the value.
func readableJSON(raw json.RawMessage) string {
	if len(raw) <= maxIndentedText/4 {
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil && b.Len() <= maxIndentedText {
			return b.String()
		}
	}
	return string(raw)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if r := []rune(string(b)); len(r) > 200 {
		return string(r[:197]) + "..."
	}
	return string(b)
}

// ValidateToolResult is sdd_validate's structured result: the verdict text
// and the ValidationResult it came from.
type ValidateToolResult struct {
	Text string `json:"text" description:"DOCTRINE VALIDATED, or DOCTRINE VIOLATIONS with one line per missing section."`
	ValidationResult
}

// ValidateTool implements sdd_validate: DOCTRINE VALIDATED or the list of
// violations.
func (e *Engine) ValidateTool(in ValidateInput) (*ValidateToolResult, error) {
	res, err := ValidateContent(in.Content, in.Type)
	if err != nil {
		return nil, err
	}
	if res.Valid {
		return &ValidateToolResult{Text: "DOCTRINE VALIDATED", ValidationResult: *res}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DOCTRINE VIOLATIONS (%s): %d missing required section(s)\n", res.Type, len(res.Missing))
	for _, m := range res.Missing {
		fmt.Fprintf(&b, "- Missing section %q: add a <%s> block or a \"## %s\" heading\n", m, sectionNorm(m), m)
	}
	return &ValidateToolResult{Text: b.String(), ValidationResult: *res}, nil
}

// LeaseResult is sdd_lease's structured result: Lease is the issued or
// returned lease; Leases the active leases (list).
type LeaseResult struct {
	Text   string   `json:"text" description:"Markdown lease info (issue), a confirmation (return) or a table of active leases (list)."`
	Action string   `json:"action" jsonschema:"enum=issue,enum=return,enum=list"`
	Lease  *Lease   `json:"lease,omitempty"`
	Leases *[]Lease `json:"leases,omitempty" description:"list: the active leases, oldest first."`
}

// LeaseTool implements sdd_lease: issue (taskId, scope), return (leaseId,
// result), list. Returning an unknown, returned or expired lease is 404.
// issue and return honour c.Idem.
func (e *Engine) LeaseTool(c Call, in LeaseInput) (*LeaseResult, error) {
	out := &LeaseResult{Action: in.Action}
	switch in.Action {
	case "issue":
		if err := required("taskId", in.TaskID); err != nil {
			return nil, err
		}
		if err := checkLeaseTask(c.Tasks, in.TaskID); err != nil {
			return nil, err
		}
		l, err := e.createLease(c, in.TaskID, in.Scope)
		if err != nil {
			return nil, err
		}
		scope := "(none)"
		if len(l.Scope) > 0 {
			scope = strings.Join(l.Scope, ", ")
		}
		out.Lease = l
		out.Text = fmt.Sprintf("# Lease issued\n\n- Lease: %s\n- Task: %s\n- Scope: %s\n- Issued: %s\n- Expires: %s\n\nReturn it with sdd_lease return when the work is done.\n",
			l.LeaseID, l.TaskID, scope, l.IssuedAt, l.ExpiresAt)
		return out, nil
	case "return":
		if err := required("leaseId", in.LeaseID); err != nil {
			return nil, err
		}
		l, err := e.returnLease(c, in.LeaseID, in.Result)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return nil, errs.NotFoundf(errs.NotFound, "leaseId", "no active lease %q: it is unknown, already returned or expired (sdd_lease list shows active leases)", in.LeaseID)
		}
		out.Lease = l
		out.Text = fmt.Sprintf("Lease %s returned: %s.", l.LeaseID, l.Result)
		return out, nil
	case "list":
		ls, err := e.ListActiveLeases()
		if err != nil {
			return nil, err
		}
		out.Leases = &ls
		if len(ls) == 0 {
			out.Text = "No active leases."
			return out, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# Active leases (%d)\n\n| Lease | Task | Scope | Issued | Expires |\n|---|---|---|---|---|\n", len(ls))
		for _, l := range ls {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", l.LeaseID, mdCell(l.TaskID), mdCell(strings.Join(l.Scope, ", ")), l.IssuedAt, l.ExpiresAt)
		}
		out.Text = b.String()
		return out, nil
	}
	return nil, badAction(in.Action, "issue", "return", "list")
}

// DashTool implements sdd_dash: Markdown text or a *Dashboard.
func (e *Engine) DashTool(in DashInput) (any, error) {
	return e.GenerateDashboard(in.Format)
}

// EvolveResult is sdd_evolve's structured result: Candidates for detect
// and report, Apply for apply, Rollback for rollback.
type EvolveResult struct {
	Text       string                `json:"text" description:"Markdown evolution output."`
	Action     string                `json:"action" jsonschema:"enum=detect,enum=apply,enum=rollback,enum=report"`
	Candidates *[]EvolutionCandidate `json:"candidates,omitempty" description:"detect and report: the current candidates."`
	Apply      *ApplyResult          `json:"apply,omitempty"`
	Rollback   *RollbackResult       `json:"rollback,omitempty"`
}

// EvolveTool implements sdd_evolve: detect (scope), apply (candidateId,
// force), rollback (candidateId), report (scope).
func (e *Engine) EvolveTool(in EvolveInput) (*EvolveResult, error) {
	out := &EvolveResult{Action: in.Action}
	switch in.Action {
	case "detect":
		c, err := e.DetectEvolution(in.Scope)
		if err != nil {
			return nil, err
		}
		scope := in.Scope
		if scope == "" {
			scope = ScopeAll
		}
		out.Text = fmt.Sprintf("# Evolution candidates (%s)\n\n", scope) + renderCandidates(c)
		out.Candidates = &c
		return out, nil
	case "apply":
		if err := required("candidateId", in.CandidateID); err != nil {
			return nil, err
		}
		r, err := e.ApplyEvolution(in.CandidateID, in.Force)
		if err != nil {
			return nil, err
		}
		out.Apply = r
		if !r.Success {
			out.Text = fmt.Sprintf("# Evolution not applied\n\n- Candidate: %s\n- Reason: %s\n", r.CandidateID, r.Message)
			if r.Recommendation != "" {
				out.Text += "- Recommendation: " + r.Recommendation + "\n"
			}
			return out, nil
		}
		out.Text = fmt.Sprintf("# Evolution applied\n\n- Candidate: %s\n- Action: %s\n- Result: %s\n\nUndo with sdd_evolve rollback candidateId %s.\n", r.CandidateID, r.ActionID, r.Message, r.CandidateID)
		return out, nil
	case "rollback":
		if err := required("candidateId", in.CandidateID); err != nil {
			return nil, err
		}
		r, err := e.RollbackEvolution(in.CandidateID)
		if err != nil {
			return nil, err
		}
		out.Rollback = r
		out.Text = fmt.Sprintf("# Evolution rolled back\n\n- Candidate: %s\n- Action: %s\n- Result: %s\n", r.CandidateID, r.ActionID, r.Message)
		return out, nil
	case "report":
		text, c, err := e.evolutionReport(in.Scope)
		if err != nil {
			return nil, err
		}
		out.Text, out.Candidates = text, &c
		return out, nil
	}
	return nil, badAction(in.Action, "detect", "apply", "rollback", "report")
}

// AgentTool implements sdd_agent. complete on an unknown spawnId is 404
// here (the domain function returns nil), so the agent learns its mistake.
// set_rule, enqueue (source c.Tool) and complete honour c.Idem.
func (e *Engine) AgentTool(c Call, in AgentInput) (any, error) {
	switch in.Action {
	case "rules":
		rules, err := e.SpawnRules()
		if err != nil {
			return nil, err
		}
		if in.Intent != "" {
			if err := checkName("intent", in.Intent); err != nil {
				return nil, err
			}
			r, ok := rules[in.Intent]
			if !ok {
				return nil, errs.NotFoundf(errs.NotFound, "intent", "no spawn rule for intent %q; create one with set_rule", in.Intent)
			}
			return &RuleResult{Intent: in.Intent, Rule: r}, nil
		}
		return map[string]any{"rules": rules, "intents": sortedKeys(rules)}, nil
	case "set_rule":
		if err := required("intent", in.Intent); err != nil {
			return nil, err
		}
		if in.Rule == nil {
			return nil, errs.Invalid("rule", "required", "rule is required for set_rule: {before?, beforeParallel?, main?, after?, afterParallel?, notes?}")
		}
		return e.setSpawnRule(c, in.Intent, *in.Rule)
	case "plan":
		if err := required("intent", in.Intent); err != nil {
			return nil, err
		}
		return e.ResolveAgentSpawnPlan(in.Intent, opts(in.Options))
	case "enqueue":
		if err := required("intent", in.Intent); err != nil {
			return nil, err
		}
		return e.queueAgentSpawnPlan(c, in.Intent, opts(in.Options))
	case "queue":
		items, err := e.ListSpawnQueue(in.Status)
		if err != nil {
			return nil, err
		}
		return map[string]any{"items": items, "count": len(items)}, nil
	case "complete":
		if err := required("spawnId", in.SpawnID); err != nil {
			return nil, err
		}
		if err := required("completionStatus", in.CompletionStatus); err != nil {
			return nil, err
		}
		it, err := e.completeSpawnQueueItem(c, in.SpawnID, in.CompletionStatus, in.Note)
		if err != nil {
			return nil, err
		}
		if it == nil {
			return nil, errs.NotFoundf(errs.NotFound, "spawnId", "no spawn queue item %q (sdd_agent queue lists them)", in.SpawnID)
		}
		return it, nil
	case "history":
		ev, err := e.ListSpawnHistory(in.Limit)
		if err != nil {
			return nil, err
		}
		return map[string]any{"events": ev, "count": len(ev)}, nil
	}
	return nil, badAction(in.Action, "rules", "set_rule", "plan", "enqueue", "queue", "complete", "history")
}

// SkillTool implements sdd_skill; register, bind and unbind honour c.Idem.
func (e *Engine) SkillTool(c Call, in SkillInput) (any, error) {
	switch in.Action {
	case "list":
		return e.ListSkillMatrix(in.AgentID)
	case "register":
		if err := required("skillId", in.SkillID); err != nil {
			return nil, err
		}
		return e.registerSkill(c, in.SkillID, SkillPayload{Title: in.Title, Description: in.Description, Tags: in.Tags})
	case "bind", "unbind":
		if err := required("agentId", in.AgentID); err != nil {
			return nil, err
		}
		if err := required("skillId", in.SkillID); err != nil {
			return nil, err
		}
		if in.Action == "bind" {
			return e.bindSkill(c, in.AgentID, in.SkillID)
		}
		return e.unbindSkill(c, in.AgentID, in.SkillID)
	case "recommend":
		if err := required("intent", in.Intent); err != nil {
			return nil, err
		}
		return e.RecommendSkillsForIntent(in.Intent, opts(in.Options))
	}
	return nil, badAction(in.Action, "list", "register", "bind", "unbind", "recommend")
}
