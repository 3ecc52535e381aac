package core

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Resource URI families of the core area: a task, its decision trail, a
// finalized audit session's portable proof (docs/decisions.md D13) and a
// project's task list.
const (
	ResourcePrefix   = "cairn://"
	TaskURIPrefix    = ResourcePrefix + "tasks/"
	TrailURIPrefix   = ResourcePrefix + "trail/"
	ProofURIPrefix   = ResourcePrefix + "proofs/"
	ProjectURIPrefix = ResourcePrefix + "projects/"
)

// proofKeyName names the checkpoint signer, as `cairn audit` names it, so a
// proof read here verifies with `cairn audit verify` and the same key.
const proofKeyName = "cairn"

var coreTemplates = []sdk.ResourceTemplate{
	{URITemplate: TaskURIPrefix + "{task_id}", Name: "task", MIMEType: "application/json",
		Description: "A task as task_get shows it, with its thought trail and dependents. Subscribe to hear of every update."},
	{URITemplate: TrailURIPrefix + "{task_id}", Name: "task-trail", MIMEType: "application/json",
		Description: "A task's decision trail: its thought records, oldest first, with the chain verified. Subscribe to hear of every new record."},
	{URITemplate: ProofURIPrefix + "{session_id}", Name: "audit-proof", MIMEType: "application/json",
		Description: "A finalized audit session's proof bundle (records, Merkle leaves and root, an inclusion proof per record, a signed checkpoint), verifiable offline with `cairn audit verify`."},
	{URITemplate: ProjectURIPrefix + "{project}", Name: "project-tasks", MIMEType: "application/json",
		Description: "A project's tasks as task_list shows them: the 100 most recently updated."},
}

func (c *Area) registerResources() {
	c.p.AddResources(sdk.ResourceSet{Prefix: ResourcePrefix, Read: c.readResource, Templates: coreTemplates})
}

// readResource serves the three cairn:// families.
func (c *Area) readResource(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
	var v any
	var err error
	switch {
	case strings.HasPrefix(uri, TaskURIPrefix):
		v, err = c.readTask(strings.TrimPrefix(uri, TaskURIPrefix))
	case strings.HasPrefix(uri, TrailURIPrefix):
		v, err = c.readTrail(strings.TrimPrefix(uri, TrailURIPrefix))
	case strings.HasPrefix(uri, ProjectURIPrefix):
		v, err = c.readProject(strings.TrimPrefix(uri, ProjectURIPrefix))
	case strings.HasPrefix(uri, ProofURIPrefix):
		return c.readProof(uri, strings.TrimPrefix(uri, ProofURIPrefix))
	default:
		return nil, errs.NotFoundf(errs.ResourceNotFound, "uri", "no resource %q: the core area serves %s{task_id}, %s{task_id}, %s{session_id} and %s{project}", uri, TaskURIPrefix, TrailURIPrefix, ProofURIPrefix, ProjectURIPrefix)
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}, nil
}

func (c *Area) readTask(id string) (tasks.Task, error) {
	svc, err := c.svc()
	if err != nil {
		return tasks.Task{}, err
	}
	yes := true
	return svc.Get(tasks.GetInput{TaskID: id, IncludeThoughtTrail: &yes, IncludeDependents: &yes})
}

func (c *Area) readTrail(id string) (audit.ListOutput, error) {
	svc, err := c.auditSvc()
	if err != nil {
		return audit.ListOutput{}, err
	}
	limit, verify := 500, true
	return svc.List(audit.ListInput{TaskID: &id, Limit: &limit, VerifyChain: &verify})
}

func (c *Area) readProject(slug string) (tasks.ListOutput, error) {
	svc, err := c.svc()
	if err != nil {
		return tasks.ListOutput{}, err
	}
	if ok, err := svc.HasProject(slug); err != nil || !ok {
		if err == nil {
			err = errs.NotFoundf(errs.ProjectNotFound, "project", "project %q does not exist", slug)
		}
		return tasks.ListOutput{}, err
	}
	limit, sortBy, order := 100, tasks.SortUpdated, "desc"
	return svc.List(tasks.ListInput{Project: &slug, Limit: &limit, SortBy: &sortBy, SortOrder: &order})
}

// readProof builds the D13 bundle of a finalized session, signed with the
// installation's checkpoint key.
func (c *Area) readProof(uri, sessionID string) ([]sdk.ResourceContents, error) {
	svc, err := c.auditSvc()
	if err != nil {
		return nil, err
	}
	meta, records, root, err := svc.Export(sessionID)
	if err != nil {
		return nil, err
	}
	signer, _, err := bundle.LoadOrCreateKey(bundle.KeyPath(c.p.Config().DataDir, os.Getenv(bundle.KeyFileEnv)), proofKeyName)
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "audit signing key: %v", err)
	}
	b, err := bundle.BuildBundle(meta, records, root, signer)
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "build proof bundle: %v", err)
	}
	raw, err := b.Marshal()
	if err != nil {
		return nil, err
	}
	return []sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}, nil
}

// linkResources tells the host which resources a published event changed,
// so subscribed clients hear of it: a task event changes the task, its
// trail (its event chain grew) and its project's list, a thought its task's
// trail, a finalize the session's proof.
func (c *Area) linkResources(ctx context.Context, eventType string, data map[string]any) {
	var uris []string
	switch {
	case strings.HasPrefix(eventType, "task."):
		if id, _ := data["task_id"].(string); id != "" {
			uris = append(uris, TaskURIPrefix+id, TrailURIPrefix+id)
		}
		if p, _ := data["project"].(string); p != "" {
			uris = append(uris, ProjectURIPrefix+p)
		}
	case eventType == audit.EventThoughtRecorded:
		if id, _ := data["task_id"].(string); id != "" {
			uris = append(uris, TrailURIPrefix+id, TaskURIPrefix+id)
		}
	case eventType == audit.EventAuditFinalized:
		if id, _ := data["session_id"].(string); id != "" {
			uris = append(uris, ProofURIPrefix+id)
		}
	}
	for _, u := range uris {
		if err := c.p.ResourceUpdated(ctx, u); err != nil {
			c.p.Logger().Warn("resource update not published", "uri", u, "error", err)
		}
	}
}

// createdTask is task_create's output, linking the new task's resource.
type createdTask tasks.CreateOutput

func (o createdTask) ExtraContent() []sdk.Content {
	return []sdk.Content{sdk.ResourceLink(TaskURIPrefix+o.TaskID, "task "+o.TaskID, "application/json")}
}

// finalizedSession is merkle_finalize's output, linking the session's proof.
type finalizedSession audit.FinalizeOutput

func (o finalizedSession) ExtraContent() []sdk.Content {
	return []sdk.Content{sdk.ResourceLink(ProofURIPrefix+o.SessionID, "proof of "+o.SessionID, "application/json")}
}
