package core

import "encoding/json"

// The argument types of the core tools. Their tags are the tools' input
// schemas (sdk/schema derives them), so every limit of the specification
// (part 8) is visible to agents before they call; the domain packages
// enforce the same rules again. Each has exactly the fields of its domain
// input, so a handler converts it (Go ignores tags in conversions) and a
// field added to one but not the other stops the build.

type taskCreateArgs struct {
	Title         string   `json:"title" jsonschema:"minLength=1,maxLength=256" description:"Short imperative title."`
	Description   *string  `json:"description,omitempty" jsonschema:"maxLength=8000" description:"Markdown details, acceptance criteria."`
	Project       string   `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" description:"Project slug; must be registered (cairn project add, CAIRN_PROJECT). Default: your session's project."`
	ParentID      *string  `json:"parent_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Parent task for a sub-task (same project)."`
	Priority      *string  `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical,default=normal"`
	Labels        []string `json:"labels,omitempty" jsonschema:"maxItems=20,minLength=1,maxLength=64"`
	Assignee      *string  `json:"assignee,omitempty" jsonschema:"maxLength=128,default=unassigned" description:"Agent or user id."`
	EstimateHours *float64 `json:"estimate_hours,omitempty" jsonschema:"minimum=0,maximum=1000"`
	DependsOn     []string `json:"depends_on,omitempty" jsonschema:"maxItems=50" pattern:"^T-[1-9][0-9]*$" description:"Tasks of the same project this one waits on; task_next_actions offers it once each is done or cancelled."`
}

type taskUpdateArgs struct {
	TaskID        string    `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	Status        *string   `json:"status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled" description:"Moves: backlog→todo; todo→in_progress|blocked; in_progress→review|blocked; blocked→todo|in_progress; review→done|backlog|blocked; any open status→cancelled; done and cancelled are final."`
	Progress      *float64  `json:"progress,omitempty" jsonschema:"minimum=0,maximum=100"`
	Description   *string   `json:"description,omitempty" jsonschema:"maxLength=8000" description:"Replaces the whole description."`
	Priority      *string   `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Assignee      *string   `json:"assignee,omitempty" jsonschema:"maxLength=128"`
	Labels        *[]string `json:"labels,omitempty" jsonschema:"maxItems=20,minLength=1,maxLength=64" description:"Replaces all labels."`
	BlockedReason *string   `json:"blocked_reason,omitempty" jsonschema:"maxLength=2000" description:"Required (non-empty) when moving to blocked."`
	DependsOn     *[]string `json:"depends_on,omitempty" jsonschema:"maxItems=50" pattern:"^T-[1-9][0-9]*$" description:"Replaces the dependencies ([] removes them); a loop is refused with ERR_CIRCULAR_DEPENDENCY (details.cycle)."`
	Claim         *bool     `json:"claim,omitempty" description:"Take the task (in_progress, assigned to you); ERR_CONFLICT names the holder if another agent has it."`
	Release       *bool     `json:"release,omitempty" description:"Give your claim back: the task returns to todo, unassigned."`
}

type taskGetArgs struct {
	TaskID              string `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	IncludeThoughtTrail *bool  `json:"include_thought_trail,omitempty" description:"Add the ids of the task's thought records."`
	IncludeDependents   *bool  `json:"include_dependents,omitempty" description:"Add its sub-task ids (dependents) and the tasks waiting on it (depended_on_by)."`
}

type taskListArgs struct {
	Project       *string  `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$"`
	Status        []string `json:"status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Priority      []string `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Assignee      *string  `json:"assignee,omitempty"`
	Label         *string  `json:"label,omitempty"`
	CreatedAfter  *string  `json:"created_after,omitempty" description:"ISO-8601; only tasks created after it."`
	CreatedBefore *string  `json:"created_before,omitempty" description:"ISO-8601; only tasks created before it."`
	Search        *string  `json:"search,omitempty" jsonschema:"maxLength=500" description:"Case-insensitive; every whitespace-separated term must occur in the title or the description."`
	Limit         *int     `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset        *int     `json:"offset,omitempty" jsonschema:"minimum=0,default=0"`
	SortBy        *string  `json:"sort_by,omitempty" jsonschema:"enum=created,enum=updated,enum=priority,enum=progress,default=updated"`
	SortOrder     *string  `json:"sort_order,omitempty" jsonschema:"enum=asc,enum=desc,default=desc"`
}

type taskNextArgs struct {
	Project        string `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" description:"Default: your session's project, else the one you used last."`
	Limit          *int   `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100,default=20"`
	IncludeBlocked *bool  `json:"include_blocked,omitempty" description:"Add blocked: tasks in status blocked (with blocked_reason) and todo tasks still waiting on dependencies (with waiting_on)."`
	Claim          *bool  `json:"claim,omitempty" description:"Atomically take the first candidate (in_progress, assigned to you) and return only it."`
}

type thoughtRecordArgs struct {
	TaskID    string          `json:"task_id" pattern:"^T-[1-9][0-9]*$" description:"The task the thought belongs to."`
	Type      string          `json:"type" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Content   string          `json:"content" jsonschema:"minLength=1,maxLength=5000" description:"What you thought, decided or found, in your own words."`
	Branch    *string         `json:"branch,omitempty" jsonschema:"maxLength=255" description:"Version-control branch the work is on."`
	CommitSHA *string         `json:"commit_sha,omitempty" jsonschema:"maxLength=128" description:"Commit the thought refers to."`
	TestsRun  []string        `json:"tests_run,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=1000"`
	Blockers  []string        `json:"blockers,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=1000"`
	Metadata  json.RawMessage `json:"metadata,omitempty" jsonschema:"type=object" description:"Any JSON object (at most 16 KiB); stored, not hashed."`
}

type thoughtListArgs struct {
	TaskID      *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"List this task's thoughts. Give task_id or session_id (or both: that task within the session)."`
	SessionID   *string `json:"session_id,omitempty" pattern:"^A-[1-9][0-9]*$" description:"List the thoughts of the audit session's tasks."`
	Type        *string `json:"type,omitempty" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Limit       *int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=100" description:"Return the latest N matching thoughts, oldest first."`
	VerifyChain *bool   `json:"verify_chain,omitempty" description:"Recompute the thought chain(s) and report chain_valid and invalid_links."`
}

type auditStartArgs struct {
	TaskID    string  `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	AuditorID string  `json:"auditor_id" jsonschema:"minLength=1,maxLength=128" description:"Who audits (agent or user id); with an API key, the key's own user."`
	Reason    *string `json:"reason,omitempty" jsonschema:"maxLength=2000"`
	Scope     *string `json:"scope,omitempty" jsonschema:"enum=shallow,enum=deep,default=shallow" description:"shallow: the task only; deep: the task and all its sub-tasks, recursively."`
}

type auditVerifyArgs struct {
	SessionID *string `json:"session_id,omitempty" pattern:"^A-[1-9][0-9]*$" description:"Verify every chain of the session's tasks."`
	TaskID    *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Verify one task's thought and event chains. At least one of session_id and task_id is required."`
	FullTrace *bool   `json:"full_trace,omitempty" description:"Add trace: every record with its stored and recomputed hash and verdict."`
}

type merkleFinalizeArgs struct {
	SessionID string  `json:"session_id" pattern:"^A-[1-9][0-9]*$"`
	TaskID    *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Seal only this task's records (it must be in the session's scope)."`
}

type merkleRootArgs struct {
	SessionID string `json:"session_id" pattern:"^A-[1-9][0-9]*$"`
}
