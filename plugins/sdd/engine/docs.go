package engine

import (
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"github.com/cairn-mcp/cairn/sdk/plainfile"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Sections are the parsed sections of a command file.
type Sections struct {
	Objective     string `json:"objective"`
	Context       string `json:"context"`
	Process       string `json:"process"`
	Constraints   string `json:"constraints"`
	Tasks         string `json:"tasks"`
	SuccessChecks string `json:"successChecks"`
}

// VitalsState is the state part of CommandVitals.
type VitalsState struct {
	Phase        string `json:"phase"`
	ActiveLeases int    `json:"activeLeases"`
	Status       string `json:"status" jsonschema:"enum=ok,enum=stale,enum=degraded"`
}

// CommandVitals is GetCommandVitals's result.
type CommandVitals struct {
	Command   string      `json:"command"`
	Source    string      `json:"source" jsonschema:"enum=workspace,enum=bundled,enum=synthetic"`
	Path      string      `json:"path,omitempty" description:"Root-relative path of a workspace command file."`
	Sections  Sections    `json:"sections"`
	State     VitalsState `json:"state"`
	Health    Health      `json:"health"`
	Synthetic bool        `json:"synthetic,omitempty" description:"True when no command file exists and the sections are generic."`
}

// sectionAliases maps each section to the normalized tag or heading names
// that fill it.
var sectionAliases = []struct {
	field func(*Sections) *string
	names []string
}{
	{func(s *Sections) *string { return &s.Objective }, []string{"objective", "goal", "purpose"}},
	{func(s *Sections) *string { return &s.Context }, []string{"context", "execution_context"}},
	{func(s *Sections) *string { return &s.Process }, []string{"process", "steps", "workflow"}},
	{func(s *Sections) *string { return &s.Constraints }, []string{"constraints", "rules", "guardrails"}},
	{func(s *Sections) *string { return &s.Tasks }, []string{"tasks"}},
	{func(s *Sections) *string { return &s.SuccessChecks }, []string{"success_checks", "success_criteria", "successchecks", "verification"}},
}

// parseSections extracts the six sections from a command or agent file:
// an XML-style <tag> block wins over a Markdown heading of the same name.
func parseSections(md string) Sections {
	var s Sections
	hs := headings(md)
	for _, a := range sectionAliases {
		dst := a.field(&s)
		for _, n := range a.names {
			if v, ok := tagBlock(md, n); ok {
				*dst = v
				break
			}
		}
		if *dst == "" {
			if v, ok := headingSection(md, hs, 1, a.names...); ok {
				*dst = v
			}
		}
	}
	return s
}

// GetCommandVitals parses <Root>/.agents/commands/<id>.md (or the bundled
// default) into sections and adds the project state and health. When
// neither file exists the vitals are synthetic: generic sections that tell
// the agent how to add the command file.
func (e *Engine) GetCommandVitals(commandID string) (*CommandVitals, error) {
	if err := checkName("command", commandID); err != nil {
		return nil, err
	}
	v := &CommandVitals{Command: commandID}
	d, err := e.loadDoc(kindCommands, commandID, "command")
	switch {
	case err == nil:
		v.Source, v.Path, v.Sections = d.Source, d.Path, parseSections(d.Content)
	case errors.Is(err, fs.ErrNotExist):
		v.Source, v.Synthetic = "synthetic", true
		v.Sections = Sections{
			Objective:     fmt.Sprintf("Run the %q command for the current phase.", commandID),
			Context:       fmt.Sprintf("No command file exists at .agents/commands/%s.md and no bundled default has this name.", commandID),
			Process:       "1. Read the current phase with sdd_state get currentPhase.\n2. Take a lease with sdd_lease issue before changing files.\n3. Do the work, then return the lease.",
			Constraints:   "Stay inside the workspace root. Record decisions with thought_record.",
			Tasks:         fmt.Sprintf("Write .agents/commands/%s.md with objective, context, process, constraints, tasks and success checks to replace these synthetic vitals.", commandID),
			SuccessChecks: "The lease is returned and the outcome is recorded.",
		}
	default:
		return nil, err
	}
	err = e.read(func(s *state, now time.Time) error {
		v.Health = e.healthLocked(s, now)
		v.State = VitalsState{Phase: s.Project.CurrentPhase, ActiveLeases: countActive(s, now), Status: v.Health.Status}
		if projectStale(s, now) {
			v.State.Status = "stale"
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func countActive(s *state, now time.Time) int {
	n := 0
	for _, l := range s.Leases {
		if l.activeAt(now) {
			n++
		}
	}
	return n
}

// PlanResult is GeneratePlan's result.
type PlanResult struct {
	Phase    string `json:"phase"`
	Path     string `json:"path"`
	Markdown string `json:"markdown"`
}

// planFileName is the plan file of a phase (N is the phase as given).
func planFileName(phase string) string { return "PLAN-phase-" + phase + ".md" }

// CheckPhase validates a phase name: digits or a safe name, never a path.
func CheckPhase(phase string) error { return checkName("phase", phase) }

// GeneratePlan writes <Root>/.planning/PLAN-phase-<phase>.md (replacing an
// existing plan of that phase) with the five required plan sections filled
// from context and the state, records the phase as the current phase, and
// returns the Markdown.
func (e *Engine) GeneratePlan(phase, context string) (*PlanResult, error) {
	if err := CheckPhase(phase); err != nil {
		return nil, err
	}
	if err := checkText("context", context, false, maxTextLen); err != nil {
		return nil, err
	}
	res, _, err := e.writePlan("", phase, context, true, idempotency.Key{}, nil)
	return res, err
}

// writePlan renders and writes a plan; with overwrite false an existing
// file is left alone (errs 409). It returns the previous content, if any,
// so evolution can roll back. With a key, the state write that records the
// phase also records outcome(result) under k. A move of the current phase
// the phase gate holds back for actor is refused before anything is
// written (docs/decisions.md D45).
func (e *Engine) writePlan(actor, phase, context string, overwrite bool, k idempotency.Key, outcome func(*PlanResult) any) (*PlanResult, *string, error) {
	return e.writePlanRecorded(actor, phase, context, overwrite, k, nil, outcome)
}

// writePlanRecorded is writePlan that stores an outcome already recorded
// under k (a concurrent call with the same key won) in *recorded.
func (e *Engine) writePlanRecorded(actor, phase, context string, overwrite bool, k idempotency.Key, recorded *json.RawMessage, outcome func(*PlanResult) any) (*PlanResult, *string, error) {
	actor = actorOrUnknown(actor)
	if err := e.checkGate(actor, phase); err != nil {
		return nil, nil, err
	}
	var md string
	if err := e.read(func(s *state, now time.Time) error {
		md = renderPlan(s, now, phase, context)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	r, err := openRoot(e.root)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	if _, err := ensurePlanningRoot(r, "phase"); err != nil {
		return nil, nil, err
	}
	rel := planningRel + "/" + planFileName(phase)
	var prev *string
	if fi, err := r.Lstat(rel); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, nil, errs.Invalidf("phase", "regularFile", "%s exists and is %s; remove it", rel, plainfile.Kind(fi.Mode())).With("path", rel)
		}
		if !overwrite {
			return nil, nil, errs.Conflictf(errs.Conflict, "%s already exists", planFileName(phase)).With("field", "phase")
		}
		// The old plan is kept for evolution's rollback; it is read under
		// the same rules as any workspace file.
		b, err := readRegular(r, rel, maxContentBytes)
		if err != nil {
			if isRefusal(err) {
				return nil, nil, fsRefusal("phase", rel, err)
			}
			return nil, nil, errs.Newf(500, errs.Internal, "cannot read %s: %v", rel, err)
		}
		p := string(b)
		prev = &p
	} else if err := classify(err); errors.Is(err, errEscapes) {
		return nil, nil, fsRefusal("phase", rel, err)
	}
	if err := writeAtomic(r, rel, []byte(md)); err != nil {
		if err := classify(err); errors.Is(err, errEscapes) {
			return nil, nil, fsRefusal("phase", rel, err)
		}
		return nil, nil, errs.Newf(500, errs.Internal, "cannot write %s: %v", rel, err)
	}
	res := &PlanResult{Phase: phase, Path: rel, Markdown: md}
	err = e.commit(k, recorded, func(s *state, now time.Time, _ func(string, any)) (any, error) {
		if err := gateMove(s, phase, actor); err != nil {
			return nil, err
		}
		phaseMoved(s, phase)
		s.Project.CurrentPhase = phase
		s.Project.Phases[phase] = PhaseRecord{Phase: phase, PlanFile: rel, PlannedAt: iso(now)}
		if outcome == nil {
			return nil, nil
		}
		return outcome(res), nil
	})
	if err != nil {
		return nil, nil, e.refusedForGate(err)
	}
	return res, prev, nil
}

func renderPlan(s *state, now time.Time, phase, context string) string {
	ctxLines := nonEmptyLines(context)
	objective := fmt.Sprintf("Deliver phase %s: turn its requirements into working, tested changes that a reviewer can verify from this plan alone.", phase)
	if len(ctxLines) > 0 {
		objective = strings.TrimSpace(strings.TrimLeft(ctxLines[0], "#-*> "))
	}
	tasks := planTaskLines(context)
	var success []string
	for _, l := range ctxLines {
		t := strings.TrimSpace(l)
		low := strings.ToLower(t)
		if strings.HasPrefix(low, "success:") || strings.HasPrefix(low, "done when:") {
			success = append(success, strings.TrimSpace(t[strings.Index(t, ":")+1:]))
		}
	}
	if len(success) == 0 {
		success = []string{
			"Every task above is done and its evidence is recorded.",
			"All tests, vet and linters pass on a clean checkout.",
			fmt.Sprintf("The phase %s objective is observable by running the software, not only by reading code.", phase),
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# Phase %s Plan\n\n", phase)
	fmt.Fprintf(&b, "Generated %s by cairn sdd_plan. Edit freely; `sdd_validate` with type plan checks the required sections.\n\n", iso(now))
	fmt.Fprintf(&b, "<objective>\n%s\n</objective>\n\n", objective)
	b.WriteString("<context>\n")
	fmt.Fprintf(&b, "- Phase: %s\n", phase)
	if s.Project.CurrentPhase != "" && s.Project.CurrentPhase != phase {
		fmt.Fprintf(&b, "- Previous current phase: %s\n", s.Project.CurrentPhase)
	}
	active := 0
	var leaseTasks []string
	for _, l := range s.Leases {
		if l.activeAt(now) {
			active++
			leaseTasks = append(leaseTasks, l.TaskID)
		}
	}
	fmt.Fprintf(&b, "- Active leases: %d", active)
	if active > 0 {
		fmt.Fprintf(&b, " (tasks %s)", strings.Join(leaseTasks, ", "))
	}
	b.WriteString("\n")
	pending := 0
	for _, q := range s.Agents.SpawnQueue {
		if q.Status == SpawnPending {
			pending++
		}
	}
	fmt.Fprintf(&b, "- Pending agent spawns: %d\n", pending)
	for _, name := range sortedKeys(s.Bindings) {
		bd := s.Bindings[name]
		fmt.Fprintf(&b, "- Project %s bound to roadmap %q (pace %q)\n", name, bd.RoadmapID, bd.Pace)
	}
	if v, ok := lookup(s.Values, []string{"phases", phase}); ok {
		if j, err := json.Marshal(v); err == nil {
			fmt.Fprintf(&b, "- Stored state for this phase (phases.%s): %s\n", phase, j)
		}
	}
	if context != "" {
		fmt.Fprintf(&b, "\nProvided context:\n\n%s\n", strings.TrimSpace(context))
	}
	b.WriteString("</context>\n\n<tasks>\n")
	for i, t := range tasks {
		fmt.Fprintf(&b, "%d. [ ] %s\n", i+1, t)
	}
	b.WriteString("</tasks>\n\n<verification>\n")
	b.WriteString("- Run the project's test command (for Go: `go test ./...`) and keep the output.\n")
	b.WriteString("- Run vet and the linters the project uses; zero findings.\n")
	b.WriteString("- Re-read each success criterion and point to the test or command that proves it.\n")
	b.WriteString("- Run `sdd_validate` on this plan; it must report DOCTRINE VALIDATED.\n")
	b.WriteString("</verification>\n\n<success_criteria>\n")
	for _, c := range success {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	b.WriteString("</success_criteria>\n")
	return b.String()
}

// planTaskLines are the task items of the plan context renders: its "- "
// (or "* ", "- [ ] ") lines that are not criteria, else the default steps.
func planTaskLines(context string) []string {
	var tasks []string
	for _, l := range nonEmptyLines(context) {
		t := strings.TrimSpace(l)
		low := strings.ToLower(t)
		switch {
		case strings.HasPrefix(low, "success:"), strings.HasPrefix(low, "done when:"):
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "- [ ] "):
			tasks = append(tasks, strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(t, "-* "), "[ ] ")))
		}
	}
	if len(tasks) == 0 {
		tasks = []string{
			"Confirm scope: restate the objective, list the files and packages the phase touches, and note anything out of scope.",
			"Write failing tests that express each success criterion below.",
			"Implement the smallest change that makes those tests pass; keep each commit focused.",
			"Run the full test suite, vet and linters; fix every failure before moving on.",
			"Record decisions and evidence (commands run, results) with thought_record, then return the lease.",
		}
	}
	return tasks
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// GenerateDiscussion returns Markdown that frames the discussion of a
// phase before it is planned: goal, questions, decisions to lock, risks and
// the next step. It writes nothing.
func (e *Engine) GenerateDiscussion(phase, topic string) (string, error) {
	if err := CheckPhase(phase); err != nil {
		return "", err
	}
	if err := checkText("topic", topic, false, maxTextLen); err != nil {
		return "", err
	}
	var b strings.Builder
	err := e.read(func(s *state, now time.Time) error {
		fmt.Fprintf(&b, "# Phase %s Discussion\n\n", phase)
		if topic != "" {
			fmt.Fprintf(&b, "**Topic:** %s\n\n", strings.TrimSpace(topic))
		}
		b.WriteString("## Where we are\n\n")
		cur := s.Project.CurrentPhase
		if cur == "" {
			cur = "none"
		}
		fmt.Fprintf(&b, "- Current phase: %s\n", cur)
		if rec, ok := s.Project.Phases[phase]; ok && rec.PlannedAt != "" {
			fmt.Fprintf(&b, "- A plan already exists: %s (planned %s). Discuss changes before regenerating it.\n", rec.PlanFile, rec.PlannedAt)
		} else {
			fmt.Fprintf(&b, "- No plan yet for phase %s.\n", phase)
		}
		fmt.Fprintf(&b, "- Active leases: %d\n\n", countActive(s, now))
		b.WriteString("## Questions to settle\n\n")
		subject := "this phase"
		if topic != "" {
			subject = fmt.Sprintf("%q", strings.TrimSpace(topic))
		}
		fmt.Fprintf(&b, "1. What must be true when %s is done? State it as observable behaviour.\n", subject)
		b.WriteString("2. What is explicitly out of scope?\n")
		b.WriteString("3. Which existing interfaces, files or data formats must not change?\n")
		b.WriteString("4. Where are the gray areas (naming, error handling, limits, defaults) that the plan must decide?\n")
		b.WriteString("5. How will we verify it: which tests, commands or manual checks?\n\n")
		b.WriteString("## Decisions to lock\n\n")
		b.WriteString("Record each answer with `thought_record` (type decision) or `sdd_state set phases.")
		fmt.Fprintf(&b, "%s.decisions`, so the planner reads them instead of guessing.\n\n", phase)
		b.WriteString("## Risks\n\n")
		b.WriteString("- Hidden coupling: changes that ripple into other packages or tools.\n")
		b.WriteString("- Irreversible steps: data migrations, deleted files, published interfaces.\n")
		b.WriteString("- Unverifiable claims: any success criterion without a test or command behind it.\n\n")
		b.WriteString("## Next step\n\n")
		fmt.Fprintf(&b, "Run `sdd_plan` with phase %s and the agreed context (one task per `- ` line, `success:` lines for criteria).\n", phase)
		return nil
	})
	return b.String(), err
}

// Content types of ValidateContent.
var requiredSections = map[string][]string{
	"plan":         {"objective", "context", "tasks", "verification", "success_criteria"},
	"project":      {"What This Is", "Core Value", "Requirements"},
	"requirements": {"v1 Requirements", "Out of Scope", "Traceability"},
}

// ValidationResult is ValidateContent's result.
type ValidationResult struct {
	Valid   bool     `json:"valid"`
	Missing []string `json:"missing"`
	Type    string   `json:"type" jsonschema:"enum=plan,enum=project,enum=requirements"`
}

// ValidateContent checks that content has every required section of its
// type (plan, the default; project; requirements). A section is present as
// a <tag> block (name lower-cased, spaces as underscores, closed) or as a
// heading of level two or deeper, compared case-insensitively.
func ValidateContent(content, typ string) (*ValidationResult, error) {
	if typ == "" {
		typ = "plan"
	}
	req, ok := requiredSections[typ]
	if !ok {
		return nil, errs.Invalidf("type", "enum", "type must be plan, project or requirements, not %q", typ)
	}
	if strings.TrimSpace(content) == "" {
		return nil, errs.Invalid("content", "required", "content is required: pass the document text to validate")
	}
	if len(content) > maxContentBytes {
		return nil, errs.Invalidf("content", "maxLength", "content must be at most %d bytes", maxContentBytes)
	}
	hs := headings(content)
	res := &ValidationResult{Valid: true, Missing: []string{}, Type: typ}
	for _, name := range req {
		n := sectionNorm(name)
		found := false
		for _, tag := range []string{n, strings.ReplaceAll(n, "_", "-")} {
			if _, ok := tagBlock(content, tag); ok {
				found = true
				break
			}
		}
		if !found {
			_, found = headingSection(content, hs, 2, n)
		}
		if !found {
			res.Missing = append(res.Missing, name)
		}
	}
	res.Valid = len(res.Missing) == 0
	return res, nil
}

// ValidateContent is the method form of the package function.
func (e *Engine) ValidateContent(content, typ string) (*ValidationResult, error) {
	return ValidateContent(content, typ)
}
