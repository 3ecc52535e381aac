package engine

import (
	"errors"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Evolution scopes and action kinds.
const (
	ScopeAll      = "all"
	ScopeWorkflow = "workflow"
	ScopeDoctrine = "doctrine"

	ActionWritePlan      = "write_plan"
	ActionReturnLeases   = "return_leases"
	ActionRefreshProject = "refresh_project"
)

// ForceThreshold is the confidence below which applying a candidate needs
// force: low-confidence refinements are suggestions, not fixes.
const ForceThreshold = 0.7

// EvolutionCandidate is one detected refinement.
type EvolutionCandidate struct {
	ID          string          `json:"id"`
	Scope       string          `json:"scope" jsonschema:"enum=workflow,enum=doctrine"`
	Confidence  float64         `json:"confidence"`
	Description string          `json:"description"`
	Action      EvolutionAction `json:"action"`
}

// EvolutionAction is what applying a candidate does; once applied it is
// recorded with its rollback information.
type EvolutionAction struct {
	Kind         string    `json:"kind" jsonschema:"enum=write_plan,enum=return_leases,enum=refresh_project"`
	Phase        string    `json:"phase,omitempty"`
	LeaseIDs     []string  `json:"leaseIds,omitempty"`
	Directories  []string  `json:"directories,omitempty"`
	ActionID     string    `json:"actionId,omitempty"`
	CandidateID  string    `json:"candidateId,omitempty"`
	AppliedAt    string    `json:"appliedAt,omitempty"`
	RolledBackAt string    `json:"rolledBackAt,omitempty"`
	Rollback     *Rollback `json:"rollback,omitempty"`
}

// Rollback is what undoing an applied action needs.
type Rollback struct {
	// CreatedFile is a root-relative file the action created; removed on
	// rollback unless PreviousContent is set, in which case it is restored.
	CreatedFile     string  `json:"createdFile,omitempty"`
	PreviousContent *string `json:"previousContent,omitempty"`
	// CreatedDirs are root-relative directories the action created;
	// removed on rollback when still empty.
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// ReturnedLeases are leases the action marked returned.
	ReturnedLeases []string `json:"returnedLeases,omitempty"`
}

// ApplyResult is ApplyEvolution's result.
type ApplyResult struct {
	Success        bool   `json:"success"`
	CandidateID    string `json:"candidateId"`
	ActionID       string `json:"actionId,omitempty"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation,omitempty"`
}

// RollbackResult is RollbackEvolution's result.
type RollbackResult struct {
	Success     bool   `json:"success"`
	CandidateID string `json:"candidateId"`
	ActionID    string `json:"actionId"`
	Message     string `json:"message"`
}

func checkScope(scope string) (string, error) {
	switch scope {
	case "":
		return ScopeAll, nil
	case ScopeAll, ScopeWorkflow, ScopeDoctrine:
		return scope, nil
	}
	return "", errs.Invalidf("scope", "enum", "scope must be all, workflow or doctrine, not %q", scope)
}

// DetectEvolution lists candidates in scope: missing plans (doctrine: a
// phase known to the state without its PLAN file), stale leases (workflow:
// expired but never returned) and a stale project (workflow: no state write
// for StaleProjectAfter).
func (e *Engine) DetectEvolution(scope string) ([]EvolutionCandidate, error) {
	scope, err := checkScope(scope)
	if err != nil {
		return nil, err
	}
	var out []EvolutionCandidate
	err = e.read(func(s *state, now time.Time) error {
		out = e.detectLocked(s, now, scope)
		return nil
	})
	return out, err
}

func (e *Engine) detectLocked(s *state, now time.Time, scope string) []EvolutionCandidate {
	out := []EvolutionCandidate{}
	if scope == ScopeAll || scope == ScopeDoctrine {
		phases := sortedKeys(s.Project.Phases)
		if cp := s.Project.CurrentPhase; cp != "" && !slices.Contains(phases, cp) {
			phases = append(phases, cp)
		}
		r, err := os.OpenRoot(e.root)
		if err != nil {
			phases = nil
		} else {
			defer r.Close()
		}
		for _, p := range phases {
			if checkName("phase", p) != nil {
				continue
			}
			if _, err := r.Lstat(planningRel + "/" + planFileName(p)); errors.Is(err, fs.ErrNotExist) {
				out = append(out, EvolutionCandidate{
					ID: "missing-plan-" + p, Scope: ScopeDoctrine, Confidence: 0.9,
					Description: fmt.Sprintf("Phase %s is recorded in the state but .planning/%s does not exist.", p, planFileName(p)),
					Action:      EvolutionAction{Kind: ActionWritePlan, Phase: p},
				})
			}
		}
	}
	if scope == ScopeAll || scope == ScopeWorkflow {
		for _, l := range s.Leases {
			if l.ReturnedAt == "" && !l.activeAt(now) {
				out = append(out, EvolutionCandidate{
					ID: "stale-lease-" + l.LeaseID, Scope: ScopeWorkflow, Confidence: 0.95,
					Description: fmt.Sprintf("Lease %s on task %s expired at %s and was never returned.", l.LeaseID, l.TaskID, l.ExpiresAt),
					Action:      EvolutionAction{Kind: ActionReturnLeases, LeaseIDs: []string{l.LeaseID}},
				})
			}
		}
		if projectStale(s, now) {
			out = append(out, EvolutionCandidate{
				ID: "stale-project", Scope: ScopeWorkflow, Confidence: 0.6,
				Description: fmt.Sprintf("No state write since %s (more than %s).", s.Project.LastWriteAt, StaleProjectAfter),
				Action:      EvolutionAction{Kind: ActionRefreshProject, Directories: []string{".planning"}},
			})
		}
	}
	return out
}

// ApplyEvolution applies a currently detected candidate. An id that is not
// detected now is 404 (it never existed or was already resolved). A
// candidate below ForceThreshold is not applied without force
// ({success:false} with a recommendation). The action and its rollback
// information are recorded in the state.
func (e *Engine) ApplyEvolution(candidateID string, force bool) (*ApplyResult, error) {
	if err := checkText("candidateId", candidateID, true, maxShortText); err != nil {
		return nil, err
	}
	var cand *EvolutionCandidate
	if err := e.read(func(s *state, now time.Time) error {
		for _, c := range e.detectLocked(s, now, ScopeAll) {
			if c.ID == candidateID {
				c := c
				cand = &c
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if cand == nil {
		return nil, errs.NotFoundf(errs.NotFound, "candidateId",
			"no current evolution candidate %q; run sdd_evolve detect to list candidates", candidateID)
	}
	if cand.Confidence < ForceThreshold && !force {
		return &ApplyResult{
			Success: false, CandidateID: candidateID,
			Message:        fmt.Sprintf("confidence %.2f is below %.2f; not applied", cand.Confidence, ForceThreshold),
			Recommendation: "review the candidate, then apply again with force: true",
		}, nil
	}
	act := cand.Action
	rb := &Rollback{}
	var msg string
	switch act.Kind {
	case ActionWritePlan:
		ctx := fmt.Sprintf("Recreate the plan of phase %s\nThe phase was recorded in the state without a plan file; review and complete this plan.", act.Phase)
		created := !e.workspaceHas(planningRel)
		res, prev, err := e.writePlan("", act.Phase, ctx, force, idempotency.Key{}, nil)
		if ee, ok := errs.As(err); ok && ee.Code == errs.ApprovalRequired {
			return nil, err // the phase gate holds the move back: a person decides
		}
		if err != nil {
			return &ApplyResult{Success: false, CandidateID: candidateID, Message: "could not write the plan: " + errs.From(err).Message,
				Recommendation: "pass force: true to overwrite an existing plan file"}, nil
		}
		rb.CreatedFile, rb.PreviousContent = res.Path, prev
		if created {
			rb.CreatedDirs = []string{".planning"}
		}
		msg = "wrote " + res.Path
	case ActionRefreshProject:
		r, err := openRoot(e.root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		for _, d := range act.Directories {
			if _, err := r.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				if err := r.MkdirAll(d, 0o755); err != nil {
					if err := classify(err); errors.Is(err, errEscapes) {
						return nil, fsRefusal("candidateId", d, err)
					}
					return nil, errs.Newf(500, errs.Internal, "cannot create %s: %v", d, err)
				}
				rb.CreatedDirs = append(rb.CreatedDirs, d)
			}
		}
		msg = "refreshed the project state"
		if len(rb.CreatedDirs) > 0 {
			msg += " and created " + strings.Join(rb.CreatedDirs, ", ")
		}
	case ActionReturnLeases:
		msg = "returned lease " + strings.Join(act.LeaseIDs, ", ")
	}
	var actionID string
	err := e.write(func(s *state, now time.Time, emit func(string, any)) error {
		if act.Kind == ActionReturnLeases {
			for i := range s.Leases {
				l := &s.Leases[i]
				if slices.Contains(act.LeaseIDs, l.LeaseID) && l.ReturnedAt == "" {
					l.ReturnedAt, l.Result = iso(now), "expired (returned by evolution)"
					rb.ReturnedLeases = append(rb.ReturnedLeases, l.LeaseID)
					emit(EventLeaseReturned, *l)
				}
			}
		}
		actionID = fmt.Sprintf("E-%d", s.next("evolution"))
		rec := act
		rec.ActionID, rec.CandidateID, rec.AppliedAt, rec.Rollback = actionID, candidateID, iso(now), rb
		s.Evolution = append(s.Evolution, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &ApplyResult{Success: true, CandidateID: candidateID, ActionID: actionID, Message: msg}, nil
}

// RollbackEvolution undoes the most recent applied (not yet rolled back)
// action of a candidate: restores or removes the file it wrote, removes
// directories it created when still empty, and reopens leases it returned.
// No such action is 404.
func (e *Engine) RollbackEvolution(candidateID string) (*RollbackResult, error) {
	if err := checkText("candidateId", candidateID, true, maxShortText); err != nil {
		return nil, err
	}
	var act *EvolutionAction
	if err := e.read(func(s *state, _ time.Time) error {
		for i := len(s.Evolution) - 1; i >= 0; i-- {
			if a := s.Evolution[i]; a.CandidateID == candidateID && a.RolledBackAt == "" {
				act = &a
				break
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if act == nil {
		return nil, errs.NotFoundf(errs.NotFound, "candidateId", "no applied evolution action for candidate %q to roll back", candidateID)
	}
	rb := act.Rollback
	if rb == nil {
		rb = &Rollback{}
	}
	var notes []string
	r, err := openRoot(e.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if f := rb.CreatedFile; f != "" {
		// Through os.Root: a .planning replaced by a symlink to elsewhere
		// since the apply makes this a refusal, never a write or a
		// removal outside the root.
		if !filepath.IsLocal(filepath.FromSlash(f)) {
			return nil, errs.Invalidf("candidateId", "path", "rollback path %s is not inside the workspace root", f)
		}
		if rb.PreviousContent != nil {
			if err := writeAtomic(r, f, []byte(*rb.PreviousContent)); err != nil {
				if err := classify(err); errors.Is(err, errEscapes) {
					return nil, fsRefusal("candidateId", f, err)
				}
				return nil, errs.Newf(500, errs.Internal, "cannot restore %s: %v", f, err)
			}
			notes = append(notes, "restored "+f)
		} else if err := classify(r.Remove(f)); err == nil {
			notes = append(notes, "removed "+f)
		} else if errors.Is(err, errEscapes) {
			return nil, fsRefusal("candidateId", f, err)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, errs.Newf(500, errs.Internal, "cannot remove %s: %v", f, err)
		}
	}
	for i := len(rb.CreatedDirs) - 1; i >= 0; i-- {
		d := rb.CreatedDirs[i]
		if !filepath.IsLocal(filepath.FromSlash(d)) {
			continue
		}
		// Only a real directory, and only when empty (Remove fails
		// harmlessly otherwise); a symlink put in its place stays.
		if fi, err := r.Lstat(d); err == nil && fi.IsDir() && r.Remove(d) == nil {
			notes = append(notes, "removed directory "+d)
		}
	}
	err = e.write(func(s *state, now time.Time, _ func(string, any)) error {
		for i := range s.Leases {
			l := &s.Leases[i]
			if slices.Contains(rb.ReturnedLeases, l.LeaseID) {
				l.ReturnedAt, l.Result = "", ""
				notes = append(notes, "reopened lease "+l.LeaseID)
			}
		}
		if act.Kind == ActionWritePlan && rb.PreviousContent == nil {
			if rec, ok := s.Project.Phases[act.Phase]; ok {
				rec.PlannedAt = ""
				s.Project.Phases[act.Phase] = rec
			}
		}
		for i := range s.Evolution {
			if s.Evolution[i].ActionID == act.ActionID {
				s.Evolution[i].RolledBackAt = iso(now)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	msg := "rolled back " + act.Kind
	if len(notes) > 0 {
		msg += ": " + strings.Join(notes, "; ")
	}
	return &RollbackResult{Success: true, CandidateID: candidateID, ActionID: act.ActionID, Message: msg}, nil
}

// EvolutionReport renders the candidates in scope and the recorded actions
// as Markdown.
func (e *Engine) EvolutionReport(scope string) (string, error) {
	text, _, err := e.evolutionReport(scope)
	return text, err
}

// evolutionReport is EvolutionReport that also returns the candidates it
// rendered.
func (e *Engine) evolutionReport(scope string) (string, []EvolutionCandidate, error) {
	cands, err := e.DetectEvolution(scope)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	b.WriteString("# Evolution Report\n\n")
	err = e.read(func(s *state, now time.Time) error {
		applied, rolled := 0, 0
		for _, a := range s.Evolution {
			if a.RolledBackAt != "" {
				rolled++
			} else {
				applied++
			}
		}
		fmt.Fprintf(&b, "- Candidates now: %d\n- Actions applied: %d\n- Actions rolled back: %d\n- Project status: %s\n\n",
			len(cands), applied, rolled, e.statsLocked(s, now).Status)
		b.WriteString(renderCandidates(cands))
		if len(s.Evolution) > 0 {
			b.WriteString("\n## Recent actions\n\n| Action | Candidate | Kind | Applied | Rolled back |\n|---|---|---|---|---|\n")
			from := max(0, len(s.Evolution)-20)
			for _, a := range s.Evolution[from:] {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", a.ActionID, a.CandidateID, a.Kind, a.AppliedAt, orDash(a.RolledBackAt))
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return b.String(), cands, nil
}

func renderCandidates(cands []EvolutionCandidate) string {
	var b strings.Builder
	if len(cands) == 0 {
		b.WriteString("No evolution candidates: plans, leases and project state are consistent.\n")
		return b.String()
	}
	b.WriteString("## Candidates\n\n")
	for _, c := range cands {
		fmt.Fprintf(&b, "- **%s** (%s, confidence %.2f, action %s): %s\n", c.ID, c.Scope, c.Confidence, c.Action.Kind, c.Description)
	}
	b.WriteString("\nApply one with `sdd_evolve` action apply and its candidateId")
	fmt.Fprintf(&b, " (candidates below confidence %.2f need force: true).\n", ForceThreshold)
	return b.String()
}
