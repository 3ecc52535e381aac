package accounts

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Project statuses.
const (
	ProjectActive   = "active"
	ProjectArchived = "archived"
)

// Project events. The core area listens to created (core.ProjectCreatedEvent,
// registering the slug for tasks), archived and unarchived (refusing or
// accepting new tasks under the slug) and deleted (forgetting the slug).
// Every one carries {"slug", "project_id", "workspace_id", "status"}.
const (
	EventProjectCreated    = "project.created"
	EventProjectUpdated    = "project.updated"
	EventProjectArchived   = "project.archived"
	EventProjectUnarchived = "project.unarchived"
	EventProjectDeleted    = "project.deleted"
)

// SlugPattern is the project slug rule shared with the core area (D7).
// Compiled on first use, not in package init, which every cairn process runs.
var SlugPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })

// Project is a workspace project. Its slug is globally unique, because the
// core area files tasks under bare slugs.
type Project struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	Slug        string         `json:"slug"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Status      string         `json:"status"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   string         `json:"created_at"`
	UpdatedAt   string         `json:"updated_at"`
	CreatedBy   string         `json:"created_by"`
}

// CreateProjectOptions are createProject's fields. Slug defaults to one
// derived from Name.
type CreateProjectOptions struct {
	Name        string         `json:"name"`
	Slug        string         `json:"slug,omitempty"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	CreatedBy   string         `json:"created_by,omitempty"`
}

// Slugify derives a slug from a name: lowercase ASCII letters and digits,
// other runs become "-", at most 63 characters.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
		if b.Len() >= 63 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// CheckSlug validates a project slug.
func CheckSlug(field, slug string) error {
	if !SlugPattern().MatchString(slug) {
		return errs.Invalidf(field, "pattern", "%s must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit (pattern %s; got %q)", field, SlugPattern(), slug)
	}
	return nil
}

// CreateProject creates a project in an active workspace (max_projects is
// enforced) and announces it as project.created {"slug": ...} so the core
// area registers the slug for tasks.
func (a *Admin) CreateProject(workspaceID string, o CreateProjectOptions) (*Project, error) {
	if err := checkLen("name", o.Name, 1, 255); err != nil {
		return nil, err
	}
	slug := o.Slug
	if slug == "" {
		slug = Slugify(o.Name)
		if slug == "" {
			return nil, errs.Invalid("slug", "required", "the name has no letters or digits to derive a slug from; pass slug")
		}
	}
	if err := CheckSlug("slug", slug); err != nil {
		return nil, err
	}
	if err := checkLen("description", o.Description, 0, 4000); err != nil {
		return nil, err
	}
	if err := checkMetadata("metadata", o.Metadata); err != nil {
		return nil, err
	}
	var out *Project
	err := update(a, &out, func(tx store.Tx) error {
		ws, err := liveWorkspace(tx, workspaceID)
		if err != nil {
			return err
		}
		if ws.Status != WorkspaceActive {
			return errs.Conflictf(errs.Conflict, "workspace %s is %s; reactivate it before adding projects", workspaceID, ws.Status)
		}
		slugs := tx.Bucket([]byte(store.BucketProjectSlug))
		if id := slugs.Get([]byte(slug)); id != nil {
			return errs.Conflictf(errs.Conflict, "project slug %q is taken by project %s; choose another slug", slug, id).With("field", "slug")
		}
		n, err := activeProjects(tx, workspaceID)
		if err != nil {
			return err
		}
		if n >= ws.ResourceLimits.MaxProjects {
			return errs.Conflictf(errs.LimitExceeded, "workspace %s has reached its max_projects limit (%d); archive a project or raise resource_limits.max_projects", workspaceID, ws.ResourceLimits.MaxProjects)
		}
		ts := FormatTime(a.now())
		p := &Project{ID: newID("prj"), WorkspaceID: workspaceID, Slug: slug, Name: o.Name, Description: o.Description,
			Status: ProjectActive, Metadata: orEmpty(o.Metadata), CreatedAt: ts, UpdatedAt: ts, CreatedBy: o.CreatedBy}
		if err := store.Put(tx, store.BucketProjects, []byte(p.ID), p); err != nil {
			return err
		}
		if err := slugs.Put([]byte(slug), []byte(p.ID)); err != nil {
			return err
		}
		out = p
		return a.event(tx, EventProjectCreated, map[string]any{"slug": slug, "project_id": p.ID, "workspace_id": workspaceID, "name": p.Name, "status": p.Status})
	})
	return out, internal(err)
}

func getProject(tx store.Tx, id string) (*Project, error) {
	var p Project
	found, err := store.Get(tx, store.BucketProjects, []byte(id), &p)
	if err != nil || !found {
		return nil, err
	}
	return &p, nil
}

// GetProject returns a project by id or slug, or nil.
func (a *Admin) GetProject(projectID string) (*Project, error) {
	var out *Project
	err := a.st.View(func(tx store.Tx) error {
		id := projectID
		if !strings.HasPrefix(id, "prj_") {
			if v := tx.Bucket([]byte(store.BucketProjectSlug)).Get([]byte(id)); v != nil {
				id = string(v)
			}
		}
		p, err := getProject(tx, id)
		out = p
		return err
	})
	return out, internal(err)
}

// ListProjectsOptions filter listProjects.
type ListProjectsOptions struct {
	Status string `json:"status,omitempty"`
	Page
}

// ListProjects lists a workspace's projects, oldest first; nil for an
// unknown workspace.
func (a *Admin) ListProjects(workspaceID string, o ListProjectsOptions) ([]*Project, error) {
	p, err := o.Page.check()
	if err != nil {
		return nil, err
	}
	if o.Status != "" && o.Status != ProjectActive && o.Status != ProjectArchived {
		return nil, errs.Invalidf("status", "enum", "status must be active or archived (got %q)", o.Status)
	}
	var out []*Project
	err = a.st.View(func(tx store.Tx) error {
		if ws, err := getWorkspace(tx, workspaceID); err != nil || ws == nil {
			return err
		}
		out = []*Project{}
		return tx.Bucket([]byte(store.BucketProjects)).ForEach(func(_, v []byte) error {
			var pr Project
			if err := json.Unmarshal(v, &pr); err != nil {
				return err
			}
			if pr.WorkspaceID == workspaceID && (o.Status == "" || pr.Status == o.Status) {
				out = append(out, &pr)
			}
			return nil
		})
	})
	if out == nil {
		return nil, internal(err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].ID < out[j].ID
	})
	return paginate(out, p), nil
}

// ProjectUpdates are updateProject's fields (the slug never changes: tasks
// are filed under it).
type ProjectUpdates struct {
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// UpdateProject changes a project; nil for an unknown one.
func (a *Admin) UpdateProject(projectID string, u ProjectUpdates) (*Project, error) {
	if u.Name != nil {
		if err := checkLen("name", *u.Name, 1, 255); err != nil {
			return nil, err
		}
	}
	if u.Description != nil {
		if err := checkLen("description", *u.Description, 0, 4000); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata("metadata", u.Metadata); err != nil {
		return nil, err
	}
	return a.changeProject(projectID, EventProjectUpdated, func(_ store.Tx, p *Project) (bool, error) {
		if u.Name != nil {
			p.Name = *u.Name
		}
		if u.Description != nil {
			p.Description = *u.Description
		}
		if u.Metadata != nil {
			p.Metadata = u.Metadata
		}
		return true, nil
	})
}

// ArchiveProject archives a project; nil for an unknown one. The slug
// stays reserved, and the core area keeps the project's tasks but takes no
// new ones. Archiving an archived project changes nothing.
func (a *Admin) ArchiveProject(projectID string) (*Project, error) {
	return a.changeProject(projectID, EventProjectArchived, func(_ store.Tx, p *Project) (bool, error) {
		if p.Status == ProjectArchived {
			return false, nil
		}
		p.Status = ProjectArchived
		return true, nil
	})
}

// UnarchiveProject makes an archived project active again (its workspace
// must be active and below max_projects); nil for an unknown one.
// Unarchiving an active project changes nothing.
func (a *Admin) UnarchiveProject(projectID string) (*Project, error) {
	return a.changeProject(projectID, EventProjectUnarchived, func(tx store.Tx, p *Project) (bool, error) {
		if p.Status == ProjectActive {
			return false, nil
		}
		ws, err := liveWorkspace(tx, p.WorkspaceID)
		if err != nil {
			return false, err
		}
		if ws.Status != WorkspaceActive {
			return false, errs.Conflictf(errs.Conflict, "workspace %s is %s; reactivate it before unarchiving its projects", ws.ID, ws.Status)
		}
		n, err := activeProjects(tx, ws.ID)
		if err != nil {
			return false, err
		}
		if n >= ws.ResourceLimits.MaxProjects {
			return false, errs.Conflictf(errs.LimitExceeded, "workspace %s has reached its max_projects limit (%d); archive a project or raise resource_limits.max_projects", ws.ID, ws.ResourceLimits.MaxProjects)
		}
		p.Status = ProjectActive
		return true, nil
	})
}

func activeProjects(tx store.Tx, workspaceID string) (int, error) {
	n := 0
	err := tx.Bucket([]byte(store.BucketProjects)).ForEach(func(_, v []byte) error {
		var p Project
		if err := json.Unmarshal(v, &p); err != nil {
			return err
		}
		if p.WorkspaceID == workspaceID && p.Status == ProjectActive {
			n++
		}
		return nil
	})
	return n, err
}

// projectEvent is the data of every project.* event.
func projectEvent(p *Project) map[string]any {
	return map[string]any{"slug": p.Slug, "project_id": p.ID, "workspace_id": p.WorkspaceID, "status": p.Status}
}

// changeProject applies f to a project and, when f reports a change,
// stores it and emits event.
func (a *Admin) changeProject(id, event string, f func(tx store.Tx, p *Project) (bool, error)) (*Project, error) {
	var out *Project
	err := update(a, &out, func(tx store.Tx) error {
		p, err := getProject(tx, id)
		if err != nil || p == nil {
			return err
		}
		changed, err := f(tx, p)
		if err != nil {
			return err
		}
		if !changed {
			out = p
			return nil
		}
		p.UpdatedAt = FormatTime(a.now())
		if err := store.Put(tx, store.BucketProjects, []byte(id), p); err != nil {
			return err
		}
		out = p
		return a.event(tx, event, projectEvent(p))
	})
	return out, internal(err)
}

// DeleteProject removes a project record and frees its slug in this
// store. The core area keeps the slug's tasks; success is false for an
// unknown id.
func (a *Admin) DeleteProject(projectID string) (DeleteResult, error) {
	res := DeleteResult{ID: projectID}
	err := update(a, &res, func(tx store.Tx) error {
		p, err := getProject(tx, projectID)
		if err != nil || p == nil {
			return err
		}
		if err := tx.Bucket([]byte(store.BucketProjects)).Delete([]byte(projectID)); err != nil {
			return err
		}
		if err := tx.Bucket([]byte(store.BucketProjectSlug)).Delete([]byte(p.Slug)); err != nil {
			return err
		}
		res.Success = true
		ev := projectEvent(p)
		ev["status"] = "deleted"
		return a.event(tx, EventProjectDeleted, ev)
	})
	return res, internal(err)
}

// Empty reports a deletion of nothing (an unknown id): a keyed call
// records nothing for it.
func (r DeleteResult) Empty() bool { return !r.Success }
