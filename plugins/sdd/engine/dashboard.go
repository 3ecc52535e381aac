package engine

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Stats is GetStats's record, plus health details.
type Stats struct {
	CurrentPhase     string    `json:"currentPhase"`
	ActiveLeases     int       `json:"activeLeases"`
	TotalLeases      int       `json:"totalLeases"`
	ActiveSpawnItems int       `json:"activeSpawnItems"`
	TotalSpawnItems  int       `json:"totalSpawnItems"`
	SkillsRegistered int       `json:"skillsRegistered"`
	Status           string    `json:"status" jsonschema:"enum=ok,enum=stale,enum=degraded"`
	LastWriteAt      string    `json:"lastWriteAt,omitempty"`
	Problems         []string  `json:"problems"`
	Recovery         *Recovery `json:"recovery,omitempty"`
}

// GetStats returns the stats record. Status is ok, stale (no state write
// for StaleProjectAfter) or degraded (a corrupt state file was recovered).
func (e *Engine) GetStats() (*Stats, error) {
	var st Stats
	err := e.read(func(s *state, now time.Time) error {
		st = e.statsLocked(s, now)
		return nil
	})
	return &st, err
}

func (e *Engine) statsLocked(s *state, now time.Time) Stats {
	h := e.healthLocked(s, now)
	st := Stats{
		CurrentPhase: s.Project.CurrentPhase, ActiveLeases: countActive(s, now), TotalLeases: len(s.Leases),
		TotalSpawnItems: len(s.Agents.SpawnQueue), SkillsRegistered: len(s.Skills),
		Status: "ok", LastWriteAt: s.Project.LastWriteAt, Problems: h.Problems, Recovery: h.Recovery,
	}
	for _, q := range s.Agents.SpawnQueue {
		if q.Status == SpawnPending {
			st.ActiveSpawnItems++
		}
	}
	switch {
	case e.recovery != nil:
		st.Status = "degraded"
	case projectStale(s, now):
		st.Status = "stale"
	}
	return st
}

// Dashboard is the JSON dashboard.
type Dashboard struct {
	GeneratedAt string           `json:"generatedAt"`
	Stats       Stats            `json:"stats"`
	Phases      []PhaseRecord    `json:"phases"`
	Leases      []Lease          `json:"activeLeases"`
	Pending     []SpawnQueueItem `json:"pendingSpawns"`
	SpawnCounts map[string]int   `json:"spawnCounts"`
	Bindings    BindingSummary   `json:"bindings"`
	Evolution   map[string]int   `json:"evolution"`
	// gates is the phase gates' section of the text dashboard
	// (gates_dash.go); the JSON form keeps its shape.
	gates string
}

// GenerateDashboard returns the project, lease and spawn state as a
// *Dashboard (format json) or Markdown text (format text, the default).
func (e *Engine) GenerateDashboard(format string) (any, error) {
	if format == "" {
		format = "text"
	}
	if format != "text" && format != "json" {
		return nil, errs.Invalidf("format", "enum", "format must be text or json, not %q", format)
	}
	var d Dashboard
	err := e.read(func(s *state, now time.Time) error {
		d = Dashboard{
			GeneratedAt: iso(now), Stats: e.statsLocked(s, now), Phases: []PhaseRecord{}, Leases: []Lease{},
			Pending:     []SpawnQueueItem{},
			SpawnCounts: map[string]int{SpawnPending: 0, SpawnCompleted: 0, SpawnFailed: 0, SpawnSkipped: 0},
			Bindings:    BindingSummary{Bindings: []Binding{}},
			Evolution:   map[string]int{"applied": 0, "rolledBack": 0},
		}
		for _, p := range sortedKeys(s.Project.Phases) {
			d.Phases = append(d.Phases, s.Project.Phases[p])
		}
		for _, l := range s.Leases {
			if l.activeAt(now) {
				d.Leases = append(d.Leases, l)
			}
		}
		for _, q := range s.Agents.SpawnQueue {
			d.SpawnCounts[q.Status]++
			if q.Status == SpawnPending {
				d.Pending = append(d.Pending, q)
			}
		}
		for _, n := range sortedKeys(s.Bindings) {
			b := s.Bindings[n]
			d.Bindings.Bindings = append(d.Bindings.Bindings, b)
			if b.RoadmapID != "" {
				d.Bindings.WithRoadmap++
			} else {
				d.Bindings.WithoutRoadmap++
			}
		}
		d.Bindings.TotalBindings = len(d.Bindings.Bindings)
		d.gates = gatesSection(s)
		for _, a := range s.Evolution {
			if a.RolledBackAt != "" {
				d.Evolution["rolledBack"]++
			} else {
				d.Evolution["applied"]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if format == "json" {
		return &d, nil
	}
	return renderDashboard(&d), nil
}

func renderDashboard(d *Dashboard) string {
	var b strings.Builder
	phase := d.Stats.CurrentPhase
	if phase == "" {
		phase = "none (run sdd_plan)"
	}
	b.WriteString("# SDD Dashboard\n\n")
	fmt.Fprintf(&b, "- Status: %s\n- Current phase: %s\n- Last state write: %s\n", d.Stats.Status, phase, orDash(d.Stats.LastWriteAt))
	fmt.Fprintf(&b, "- Leases: %d active of %d retained\n", d.Stats.ActiveLeases, d.Stats.TotalLeases)
	fmt.Fprintf(&b, "- Spawn queue: %d pending, %d completed, %d failed, %d skipped\n",
		d.SpawnCounts[SpawnPending], d.SpawnCounts[SpawnCompleted], d.SpawnCounts[SpawnFailed], d.SpawnCounts[SpawnSkipped])
	fmt.Fprintf(&b, "- Skills registered: %d\n- Bindings: %d (%d with a roadmap)\n", d.Stats.SkillsRegistered, d.Bindings.TotalBindings, d.Bindings.WithRoadmap)
	for _, p := range d.Stats.Problems {
		fmt.Fprintf(&b, "- Problem: %s\n", p)
	}
	if len(d.Phases) > 0 {
		b.WriteString("\n## Phases\n\n")
		for _, p := range d.Phases {
			fmt.Fprintf(&b, "- %s: %s (planned %s)\n", p.Phase, p.PlanFile, orDash(p.PlannedAt))
		}
	}
	if len(d.Leases) > 0 {
		b.WriteString("\n## Active leases\n\n| Lease | Task | Scope | Expires |\n|---|---|---|---|\n")
		for _, l := range d.Leases {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", l.LeaseID, mdCell(l.TaskID), mdCell(strings.Join(l.Scope, ", ")), l.ExpiresAt)
		}
	}
	if len(d.Pending) > 0 {
		b.WriteString("\n## Pending spawns\n\n| Spawn | Flow | Intent | Order | Agent | Stage | Mode |\n|---|---|---|---|---|---|---|\n")
		for _, q := range d.Pending {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s |\n", q.SpawnID, q.FlowID, q.Intent, q.Order, q.Agent, q.Stage, q.Mode)
		}
	}
	b.WriteString(d.gates)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}

// Resource categories of sdd:// URIs.
var resourceCategories = []string{"commands", "agents", "skills", "spawn-rules"}

// ResourceEntry is one entry of ListResources.
type ResourceEntry struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MimeType    string `json:"mimeType"`
	Description string `json:"description"`
}

// ResourceContent is ReadResource's result; Truncated is set when the
// content was cut at ResourceContentLimit characters.
type ResourceContent struct {
	ID        string `json:"id"`
	Category  string `json:"category"`
	URI       string `json:"uri"`
	MimeType  string `json:"mimeType"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ListResources lists sdd:// resources: command and agent files (bundled
// and workspace), registered skills and spawn rules.
func (e *Engine) ListResources() ([]ResourceEntry, error) {
	out := []ResourceEntry{}
	for _, id := range e.docIDs(kindCommands) {
		out = append(out, ResourceEntry{"sdd://commands/" + id, "command " + id, "text/markdown", orDefault(e.describeDoc(kindCommands, id), "SDD command "+id)})
	}
	for _, id := range e.docIDs(kindAgents) {
		out = append(out, ResourceEntry{"sdd://agents/" + id, "agent " + id, "text/markdown", orDefault(e.describeDoc(kindAgents, id), "SDD agent "+id)})
	}
	err := e.read(func(s *state, _ time.Time) error {
		for _, id := range sortedKeys(s.Skills) {
			sk := s.Skills[id]
			out = append(out, ResourceEntry{"sdd://skills/" + id, "skill " + id, "application/json", orDefault(sk.Description, sk.Title)})
		}
		for _, id := range sortedKeys(s.Agents.SpawnRules) {
			out = append(out, ResourceEntry{"sdd://spawn-rules/" + id, "spawn rule " + id, "application/json", orDefault(s.Agents.SpawnRules[id].Notes, "Spawn rule for intent "+id)})
		}
		return nil
	})
	return out, err
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// ParseResourceURI splits sdd://<category>/<id>, refusing unknown
// categories and unsafe ids (400, field uri).
func ParseResourceURI(uri string) (category, id string, err error) {
	rest, ok := strings.CutPrefix(uri, "sdd://")
	if !ok {
		return "", "", errs.Invalidf("uri", "pattern", "resource URI must look like sdd://<commands|agents|skills|spawn-rules>/<id>, got %q", uri)
	}
	category, id, ok = strings.Cut(rest, "/")
	if !ok || !slices.Contains(resourceCategories, category) {
		return "", "", errs.Invalidf("uri", "enum", "resource category must be commands, agents, skills or spawn-rules in %q", uri)
	}
	if dec, derr := url.PathUnescape(id); derr == nil && dec != id {
		// An escaped id (%2e%2e, %2f) is refused outright rather than
		// decoded: no legitimate id needs escaping.
		return "", "", errs.Invalidf("uri", "pattern", "resource id %q must not be percent-encoded", id)
	}
	if err := checkName("uri", id); err != nil {
		return "", "", err
	}
	return category, id, nil
}

// ReadResource reads an sdd:// resource; content is capped at
// ResourceContentLimit characters. Unknown ids are 404
// ERR_RESOURCE_NOT_FOUND.
func (e *Engine) ReadResource(uri string) (*ResourceContent, error) {
	cat, id, err := ParseResourceURI(uri)
	if err != nil {
		return nil, err
	}
	rc := &ResourceContent{ID: id, Category: cat, URI: uri}
	notFound := errs.NotFoundf(errs.ResourceNotFound, "uri", "no %s resource %q; list them with resources/list", cat, id)
	switch cat {
	case "commands", "agents":
		d, err := e.loadDoc(cat, id, "uri")
		if err != nil {
			if ee, ok := errs.As(err); ok {
				return nil, ee
			}
			return nil, notFound
		}
		rc.MimeType, rc.Content = "text/markdown", d.Content
	case "skills", "spawn-rules":
		var v any
		if err := e.read(func(s *state, _ time.Time) error {
			if cat == "skills" {
				if sk, ok := s.Skills[id]; ok {
					v = sk
				}
			} else if r, ok := s.Agents.SpawnRules[id]; ok {
				v = RuleResult{Intent: id, Rule: r}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if v == nil {
			return nil, notFound
		}
		j, _ := json.MarshalIndent(v, "", "  ")
		rc.MimeType, rc.Content = "application/json", string(j)
	}
	if utf8.RuneCountInString(rc.Content) > ResourceContentLimit {
		rc.Content = string([]rune(rc.Content)[:ResourceContentLimit])
		rc.Truncated = true
	}
	return rc, nil
}
