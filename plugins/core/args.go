package core

import "encoding/json"

// The argument types of the core tools. Their tags are the tools' input
// schemas (sdk/schema derives them), so every limit of the specification
// (part 8) is visible to agents before they call; the domain packages
// enforce the same rules again. Each has exactly the fields of its domain
// input, so a handler converts it (Go ignores tags in conversions) and a
// field added to one but not the other stops the build.

type taskCreateArgs struct {
	Title         string   `json:"title" jsonschema:"minLength=1,maxLength=256"`
	Description   *string  `json:"description,omitempty" jsonschema:"maxLength=8000" description:"Markdown; acceptance criteria."`
	Project       string   `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$" description:"Default: the session's."`
	ParentID      *string  `json:"parent_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Parent task, same project."`
	Priority      *string  `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Labels        []string `json:"labels,omitempty" jsonschema:"maxItems=20,minLength=1,maxLength=64"`
	Assignee      *string  `json:"assignee,omitempty" jsonschema:"maxLength=128"`
	EstimateHours *float64 `json:"estimate_hours,omitempty" jsonschema:"minimum=0,maximum=1000"`
	DependsOn     []string `json:"depends_on,omitempty" jsonschema:"maxItems=50" pattern:"^T-[1-9][0-9]*$" description:"Same-project tasks done first."`
}

type taskUpdateArgs struct {
	TaskID        string    `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	Title         *string   `json:"title,omitempty" jsonschema:"minLength=1,maxLength=256"`
	Status        *string   `json:"status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled" description:"backlog→todo→in_progress→review→done; todo, in_progress, review→blocked; blocked→todo|in_progress; review→backlog; open→cancelled."`
	Progress      *float64  `json:"progress,omitempty" jsonschema:"minimum=0,maximum=100"`
	Description   *string   `json:"description,omitempty" jsonschema:"maxLength=8000"`
	Priority      *string   `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Assignee      *string   `json:"assignee,omitempty" jsonschema:"maxLength=128"`
	Labels        *[]string `json:"labels,omitempty" jsonschema:"maxItems=20,minLength=1,maxLength=64" description:"Replaces all."`
	BlockedReason *string   `json:"blocked_reason,omitempty" jsonschema:"maxLength=2000" description:"Needed for blocked."`
	DependsOn     *[]string `json:"depends_on,omitempty" jsonschema:"maxItems=50" pattern:"^T-[1-9][0-9]*$" description:"Replaces; [] clears; no cycles."`
	Claim         *bool     `json:"claim,omitempty" description:"Yours, in_progress; 409: held, deps open."`
	Release       *bool     `json:"release,omitempty" description:"To todo, unassigned."`
	Force         *bool     `json:"force,omitempty" description:"Claim with deps open."`
}

type taskGetArgs struct {
	TaskID              string `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	IncludeThoughtTrail *bool  `json:"include_thought_trail,omitempty" description:"Add thought record ids."`
	IncludeDependents   *bool  `json:"include_dependents,omitempty" description:"Add dependents, depended_on_by."`
}

type taskListArgs struct {
	Project       *string  `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$"`
	Status        []string `json:"status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Priority      []string `json:"priority,omitempty" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Assignee      *string  `json:"assignee,omitempty"`
	Label         *string  `json:"label,omitempty"`
	CreatedAfter  *string  `json:"created_after,omitempty" description:"ISO-8601."`
	CreatedBefore *string  `json:"created_before,omitempty" description:"ISO-8601."`
	Search        *string  `json:"search,omitempty" jsonschema:"maxLength=500" description:"Words in title/description."`
	Limit         *int     `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset        *int     `json:"offset,omitempty" jsonschema:"minimum=0"`
	SortBy        *string  `json:"sort_by,omitempty" jsonschema:"enum=created,enum=updated,enum=priority,enum=progress,default=updated"`
	SortOrder     *string  `json:"sort_order,omitempty" jsonschema:"enum=asc,enum=desc,default=desc"`
}

type taskNextArgs struct {
	Project        string `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$"`
	Limit          *int   `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100,default=20"`
	IncludeBlocked *bool  `json:"include_blocked,omitempty" description:"Add blocked, waiting tasks."`
	Claim          *bool  `json:"claim,omitempty" description:"Take the first; return only it."`
}

type thoughtRecordArgs struct {
	TaskID    string          `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	Type      string          `json:"type" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Content   string          `json:"content" jsonschema:"minLength=1,maxLength=5000"`
	Branch    *string         `json:"branch,omitempty" jsonschema:"maxLength=255"`
	CommitSHA *string         `json:"commit_sha,omitempty" jsonschema:"maxLength=128"`
	TestsRun  []string        `json:"tests_run,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=1000"`
	Blockers  []string        `json:"blockers,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=1000"`
	Metadata  json.RawMessage `json:"metadata,omitempty" jsonschema:"type=object" description:"≤16 KiB; stored, not hashed."`
}

type thoughtListArgs struct {
	TaskID      *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Or session_id, or both."`
	SessionID   *string `json:"session_id,omitempty" pattern:"^A-[1-9][0-9]*$"`
	Type        *string `json:"type,omitempty" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Limit       *int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=100"`
	Offset      *int    `json:"offset,omitempty" jsonschema:"minimum=0"`
	VerifyChain *bool   `json:"verify_chain,omitempty"`
}

type auditStartArgs struct {
	TaskID    string  `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	AuditorID string  `json:"auditor_id" jsonschema:"minLength=1,maxLength=128" description:"With an API key, its user."`
	Reason    *string `json:"reason,omitempty" jsonschema:"maxLength=2000"`
	Scope     *string `json:"scope,omitempty" jsonschema:"enum=shallow,enum=deep,default=shallow" description:"deep: all nested sub-tasks."`
}

type auditVerifyArgs struct {
	SessionID *string `json:"session_id,omitempty" pattern:"^A-[1-9][0-9]*$"`
	TaskID    *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Or session_id."`
	FullTrace *bool   `json:"full_trace,omitempty" description:"Add each record's hashes."`
}

type merkleFinalizeArgs struct {
	SessionID string  `json:"session_id" pattern:"^A-[1-9][0-9]*$"`
	TaskID    *string `json:"task_id,omitempty" pattern:"^T-[1-9][0-9]*$" description:"Seal only this task (in scope)."`
}

type merkleRootArgs struct {
	SessionID string `json:"session_id" pattern:"^A-[1-9][0-9]*$"`
}
