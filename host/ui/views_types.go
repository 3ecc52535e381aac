package ui

// The dashboard's own view of the areas' tool outputs: exactly the JSON
// fields the pages show, decoded from what the tools return. The host
// reaches areas only through their tools, so it does not share
// their Go types; a field an area renames shows up empty here and in the
// page tests, not as a build break in the host.

// sessionSummary is one audit_session_list entry.
type sessionSummary struct {
	SessionID   string `json:"session_id"`
	TaskID      string `json:"task_id"`
	AuditorID   string `json:"auditor_id"`
	Reason      string `json:"reason"`
	Scope       string `json:"scope"`
	StartedAt   string `json:"started_at"`
	FinalizedAt string `json:"finalized_at"`
}

// sessionList is audit_session_list's output.
type sessionList struct {
	Sessions   []sessionSummary `json:"sessions"`
	TotalCount int              `json:"total_count"`
}

// sddDashboard is sdd_dash's JSON dashboard.
type sddDashboard struct {
	Stats  sddStats   `json:"stats"`
	Phases []sddPhase `json:"phases"`
	Leases []sddLease `json:"activeLeases"`
}

type sddStats struct {
	CurrentPhase     string   `json:"currentPhase"`
	ActiveLeases     int      `json:"activeLeases"`
	TotalLeases      int      `json:"totalLeases"`
	ActiveSpawnItems int      `json:"activeSpawnItems"`
	TotalSpawnItems  int      `json:"totalSpawnItems"`
	SkillsRegistered int      `json:"skillsRegistered"`
	Status           string   `json:"status"`
	LastWriteAt      string   `json:"lastWriteAt"`
	Problems         []string `json:"problems"`
}

type sddPhase struct {
	Phase     string `json:"phase"`
	PlanFile  string `json:"planFile"`
	PlannedAt string `json:"plannedAt"`
}

type sddLease struct {
	LeaseID   string   `json:"leaseId"`
	TaskID    string   `json:"taskId"`
	Scope     []string `json:"scope"`
	IssuedAt  string   `json:"issuedAt"`
	ExpiresAt string   `json:"expiresAt"`
}

// spawnQueueItem is one entry of sdd_agent queue.
type spawnQueueItem struct {
	SpawnID   string `json:"spawnId"`
	FlowID    string `json:"flowId"`
	Intent    string `json:"intent"`
	Agent     string `json:"agent"`
	Order     int    `json:"order"`
	Stage     string `json:"stage"`
	Mode      string `json:"mode"`
	Status    string `json:"status"`
	Note      string `json:"note"`
	CreatedAt string `json:"createdAt"`
}

// spawnHistoryEvent is one entry of sdd_agent history.
type spawnHistoryEvent struct {
	Kind    string         `json:"kind"`
	Intent  string         `json:"intent"`
	FlowID  string         `json:"flowId"`
	Details map[string]any `json:"details"`
	At      string         `json:"at"`
}

// skillMatrix is sdd_skill list's output: the registry and which agent is
// bound to which skill.
type skillMatrix struct {
	Registry []registeredSkill `json:"registry"`
	Agents   []agentSkills     `json:"agents"`
}

type registeredSkill struct {
	SkillID     string `json:"skillId"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

type agentSkills struct {
	AgentID  string   `json:"agentId"`
	SkillIDs []string `json:"skillIds"`
}
