package engine

import (
	"time"
)

// stateVersion is the schema version written into the state document.
const stateVersion = 1

// state is the whole persisted document (one JSON file).
type state struct {
	Version     int                 `json:"version"`
	Project     ProjectData         `json:"project"`
	Bindings    map[string]Binding  `json:"bindings"`
	Leases      []Lease             `json:"leases"`
	Agents      AgentSystem         `json:"agentSystem"`
	Skills      map[string]Skill    `json:"skillRegistry"`
	AgentSkills map[string][]string `json:"agentSkills"`
	Values      map[string]any      `json:"values"`
	Evolution   []EvolutionAction   `json:"evolutionActions"`
	Counters    map[string]int64    `json:"counters"`
	// Calls records the outcome of recent writes made under an
	// idempotency key, in the same atomic write as the change itself.
	Calls []callRecord `json:"idempotency"`
	// Outbox holds the events of writes not yet handled downstream
	// (outbox.go), oldest first; EventsShed counts those dropped to keep
	// it within its bounds.
	Outbox     []Event `json:"pendingEvents"`
	EventsShed int64   `json:"eventsShed,omitempty"`
	// Gates is the phase gates' mode, requests and decisions (gates.go):
	// outside Values, so sdd_state cannot reach it. Nil until a person
	// first sets a mode.
	Gates *gateState `json:"phaseGates,omitempty"`
}

// ProjectData is the project section of the state.
type ProjectData struct {
	// CurrentPhase is the phase last planned (or set through the state key
	// currentPhase).
	CurrentPhase string `json:"currentPhase,omitempty"`
	// Phases are the phases known to the project, by name.
	Phases      map[string]PhaseRecord `json:"phases"`
	CreatedAt   string                 `json:"createdAt"`
	LastWriteAt string                 `json:"lastWriteAt,omitempty"`
}

// PhaseRecord is what the state knows of one phase.
type PhaseRecord struct {
	Phase     string `json:"phase"`
	PlanFile  string `json:"planFile"`
	PlannedAt string `json:"plannedAt,omitempty"`
}

// AgentSystem is the agent section: spawn rules, queue and history.
type AgentSystem struct {
	SpawnRules   map[string]SpawnRule `json:"spawnRules"`
	SpawnQueue   []SpawnQueueItem     `json:"spawnQueue"`
	SpawnHistory []SpawnHistoryEvent  `json:"spawnHistory"`
}

func newState(now time.Time) *state {
	s := &state{Version: stateVersion}
	s.Project.CreatedAt = iso(now)
	s.normalize(now)
	return s
}

// normalize fills nil sections (older or hand-edited files) and restores
// default spawn rules for the built-in intents, which cannot be deleted.
func (s *state) normalize(now time.Time) {
	if s.Version == 0 {
		s.Version = stateVersion
	}
	if s.Project.CreatedAt == "" {
		s.Project.CreatedAt = iso(now)
	}
	if s.Project.Phases == nil {
		s.Project.Phases = map[string]PhaseRecord{}
	}
	if s.Bindings == nil {
		s.Bindings = map[string]Binding{}
	}
	if s.Leases == nil {
		s.Leases = []Lease{}
	}
	if s.Agents.SpawnRules == nil {
		s.Agents.SpawnRules = map[string]SpawnRule{}
	}
	for intent, r := range defaultSpawnRules() {
		if _, ok := s.Agents.SpawnRules[intent]; !ok {
			s.Agents.SpawnRules[intent] = r
		}
	}
	if s.Agents.SpawnQueue == nil {
		s.Agents.SpawnQueue = []SpawnQueueItem{}
	}
	if s.Agents.SpawnHistory == nil {
		s.Agents.SpawnHistory = []SpawnHistoryEvent{}
	}
	if s.Skills == nil {
		s.Skills = map[string]Skill{}
	}
	if s.AgentSkills == nil {
		s.AgentSkills = map[string][]string{}
	}
	if s.Values == nil {
		s.Values = map[string]any{}
	}
	if s.Evolution == nil {
		s.Evolution = []EvolutionAction{}
	}
	if s.Counters == nil {
		s.Counters = map[string]int64{}
	}
	if s.Calls == nil {
		s.Calls = []callRecord{}
	}
	if s.Outbox == nil {
		s.Outbox = []Event{}
	}
}

// next returns the next number of a named counter (never reused).
func (s *state) next(name string) int64 {
	s.Counters[name]++
	return s.Counters[name]
}

// prune applies the persistence rules before every write: all active leases
// plus the last MaxRetainedLeases closed ones (returned or expired — expired
// leases stay visible to evolution until pruned); all pending queue items
// plus the last MaxSpawnQueueEntries-pending closed ones; the last
// MaxSpawnHistoryEntries history events; the last MaxEvolutionActions
// evolution actions.
func prune(s *state, now time.Time) {
	closed := 0
	for _, l := range s.Leases {
		if !l.activeAt(now) {
			closed++
		}
	}
	if drop := closed - MaxRetainedLeases; drop > 0 {
		kept := make([]Lease, 0, len(s.Leases)-drop)
		for _, l := range s.Leases {
			if !l.activeAt(now) && drop > 0 {
				drop--
				continue
			}
			kept = append(kept, l)
		}
		s.Leases = kept
	}

	pending := 0
	for _, q := range s.Agents.SpawnQueue {
		if q.Status == SpawnPending {
			pending++
		}
	}
	closedQ := len(s.Agents.SpawnQueue) - pending
	if drop := closedQ - max(0, MaxSpawnQueueEntries-pending); drop > 0 {
		kept := make([]SpawnQueueItem, 0, len(s.Agents.SpawnQueue)-drop)
		for _, q := range s.Agents.SpawnQueue {
			if q.Status != SpawnPending && drop > 0 {
				drop--
				continue
			}
			kept = append(kept, q)
		}
		s.Agents.SpawnQueue = kept
	}

	if n := len(s.Agents.SpawnHistory); n > MaxSpawnHistoryEntries {
		s.Agents.SpawnHistory = append([]SpawnHistoryEvent(nil), s.Agents.SpawnHistory[n-MaxSpawnHistoryEntries:]...)
	}
	if n := len(s.Evolution); n > MaxEvolutionActions {
		s.Evolution = append([]EvolutionAction(nil), s.Evolution[n-MaxEvolutionActions:]...)
	}
}
