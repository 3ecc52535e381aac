package accounts

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Workspace statuses.
const (
	WorkspaceActive    = "active"
	WorkspaceSuspended = "suspended"
	WorkspaceArchived  = "archived"
)

// Workspace events.
const (
	EventWorkspaceCreated = "workspace.created"
	EventWorkspaceUpdated = "workspace.updated"
	EventWorkspaceDeleted = "workspace.deleted"
)

// ResourceLimits are a workspace's limits.
type ResourceLimits struct {
	MaxProjects      int `json:"max_projects"`
	MaxMembers       int `json:"max_members"`
	StorageGB        int `json:"storage_gb"`
	APICallsPerDay   int `json:"api_calls_per_day"`
	MaxConversations int `json:"max_conversations"`
}

// DefaultResourceLimits are the specification's defaults.
var DefaultResourceLimits = ResourceLimits{MaxProjects: 100, MaxMembers: 50, StorageGB: 100, APICallsPerDay: 10000, MaxConversations: 1000}

// LimitOverrides override some of the default limits; nil keeps a default.
type LimitOverrides struct {
	MaxProjects      *int `json:"max_projects,omitempty"`
	MaxMembers       *int `json:"max_members,omitempty"`
	StorageGB        *int `json:"storage_gb,omitempty"`
	APICallsPerDay   *int `json:"api_calls_per_day,omitempty"`
	MaxConversations *int `json:"max_conversations,omitempty"`
}

func (o *LimitOverrides) apply(base ResourceLimits) (ResourceLimits, error) {
	if o == nil {
		return base, nil
	}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
	}{
		{"max_projects", o.MaxProjects, &base.MaxProjects}, {"max_members", o.MaxMembers, &base.MaxMembers},
		{"storage_gb", o.StorageGB, &base.StorageGB}, {"api_calls_per_day", o.APICallsPerDay, &base.APICallsPerDay},
		{"max_conversations", o.MaxConversations, &base.MaxConversations},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < 0 || *f.v > 1_000_000_000 {
			return base, errs.Invalidf("resource_limits."+f.name, "minimum", "resource_limits.%s must be between 0 and 1000000000 (got %d)", f.name, *f.v)
		}
		*f.dst = *f.v
	}
	return base, nil
}

// Workspace is a workspace.
type Workspace struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	OwnerID        string         `json:"owner_id"`
	OrgID          *string        `json:"org_id" jsonschema:"oneof_type=string;null"`
	Settings       map[string]any `json:"settings"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	ResourceLimits ResourceLimits `json:"resource_limits"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	CreatedBy      string         `json:"created_by"`
}

// CreateWorkspaceOptions are createWorkspace's parameters.
type CreateWorkspaceOptions struct {
	Name           string          `json:"name"`
	Description    string          `json:"description,omitempty"`
	OwnerID        string          `json:"owner_id"`
	OrgID          *string         `json:"org_id,omitempty"`
	Settings       map[string]any  `json:"settings,omitempty"`
	ResourceLimits *LimitOverrides `json:"resource_limits,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
	CreatedBy      string          `json:"created_by,omitempty"`
}

func checkWorkspaceName(n string) error {
	if err := checkLen("name", n, 1, 255); err != nil {
		return err
	}
	if len(bytes.TrimSpace([]byte(n))) == 0 {
		return errs.Invalid("name", "minLength", "name must not be blank")
	}
	return nil
}

// CreateWorkspace creates an active workspace; its owner becomes its first
// member with the owner role.
func (a *Admin) CreateWorkspace(o CreateWorkspaceOptions) (*Workspace, error) {
	if err := checkWorkspaceName(o.Name); err != nil {
		return nil, err
	}
	if err := checkLen("description", o.Description, 0, 4000); err != nil {
		return nil, err
	}
	if err := checkLen("owner_id", o.OwnerID, 1, 255); err != nil {
		return nil, err
	}
	limits, err := o.ResourceLimits.apply(DefaultResourceLimits)
	if err != nil {
		return nil, err
	}
	if err := checkMetadata("settings", o.Settings); err != nil {
		return nil, err
	}
	if err := checkMetadata("metadata", o.Metadata); err != nil {
		return nil, err
	}
	if o.OrgID != nil && *o.OrgID == "" {
		o.OrgID = nil
	}
	by := o.CreatedBy
	if by == "" {
		by = o.OwnerID
	}
	ts := FormatTime(a.now())
	ws := &Workspace{
		ID: newID("ws"), Name: o.Name, Description: o.Description, OwnerID: o.OwnerID, OrgID: o.OrgID,
		Settings: orEmpty(o.Settings), Metadata: orEmpty(o.Metadata), Status: WorkspaceActive,
		ResourceLimits: limits, CreatedAt: ts, UpdatedAt: ts, CreatedBy: by,
	}
	err = update(a, &ws, func(tx store.Tx) error {
		if err := store.Put(tx, store.BucketWorkspaces, []byte(ws.ID), ws); err != nil {
			return err
		}
		m := Member{WorkspaceID: ws.ID, UserID: o.OwnerID, Role: RoleOwner, JoinedAt: ts, InvitedBy: by, Metadata: map[string]any{}}
		if err := putMember(tx, m); err != nil {
			return err
		}
		return a.event(tx, EventWorkspaceCreated, map[string]any{"workspace_id": ws.ID, "name": ws.Name, "owner_id": ws.OwnerID})
	})
	if err != nil {
		return nil, internal(err)
	}
	return ws, nil
}

func getWorkspace(tx store.Tx, id string) (*Workspace, error) {
	var ws Workspace
	found, err := store.Get(tx, store.BucketWorkspaces, []byte(id), &ws)
	if err != nil || !found {
		return nil, err
	}
	return &ws, nil
}

// liveWorkspace loads a workspace that must exist and not be archived.
func liveWorkspace(tx store.Tx, id string) (*Workspace, error) {
	ws, err := getWorkspace(tx, id)
	if err != nil {
		return nil, err
	}
	if ws == nil {
		return nil, errs.NotFoundf(errs.NotFound, "workspace_id", "workspace %s does not exist", id)
	}
	if ws.Status == WorkspaceArchived {
		return nil, errs.Conflictf(errs.Conflict, "workspace %s is archived; nothing can be added to it", id)
	}
	return ws, nil
}

// GetWorkspace returns the workspace or nil.
func (a *Admin) GetWorkspace(id string) (*Workspace, error) {
	var out *Workspace
	err := a.st.View(func(tx store.Tx) error {
		ws, err := getWorkspace(tx, id)
		out = ws
		return err
	})
	return out, internal(err)
}

// ListWorkspacesOptions filter listWorkspaces.
type ListWorkspacesOptions struct {
	OrgID   string `json:"org_id,omitempty"`
	OwnerID string `json:"owner_id,omitempty"`
	Status  string `json:"status,omitempty"`
	// Visible, when set, keeps only the workspaces it accepts (before
	// paging): how a caller sees only the workspaces it belongs to.
	Visible func(ws *Workspace) bool `json:"-"`
	Page
}

func checkWorkspaceStatus(s string) error {
	switch s {
	case WorkspaceActive, WorkspaceSuspended, WorkspaceArchived:
		return nil
	}
	return errs.Invalidf("status", "enum", "status must be one of active, suspended, archived (got %q)", s)
}

// ListWorkspaces lists workspaces, oldest first.
func (a *Admin) ListWorkspaces(o ListWorkspacesOptions) ([]*Workspace, error) {
	p, err := o.Page.check()
	if err != nil {
		return nil, err
	}
	if o.Status != "" {
		if err := checkWorkspaceStatus(o.Status); err != nil {
			return nil, err
		}
	}
	all := []*Workspace{}
	err = a.st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketWorkspaces)).ForEach(func(_, v []byte) error {
			var ws Workspace
			if err := json.Unmarshal(v, &ws); err != nil {
				return err
			}
			if (o.OrgID != "" && (ws.OrgID == nil || *ws.OrgID != o.OrgID)) || (o.OwnerID != "" && ws.OwnerID != o.OwnerID) || (o.Status != "" && ws.Status != o.Status) ||
				(o.Visible != nil && !o.Visible(&ws)) {
				return nil
			}
			all = append(all, &ws)
			return nil
		})
	})
	if err != nil {
		return nil, internal(err)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].CreatedAt != all[j].CreatedAt {
			return all[i].CreatedAt < all[j].CreatedAt
		}
		return all[i].ID < all[j].ID
	})
	return paginate(all, p), nil
}

// WorkspaceUpdates are updateWorkspace's fields; nil leaves a field.
type WorkspaceUpdates struct {
	Name           *string         `json:"name,omitempty"`
	Description    *string         `json:"description,omitempty"`
	Settings       map[string]any  `json:"settings,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
	Status         *string         `json:"status,omitempty"`
	ResourceLimits *LimitOverrides `json:"resource_limits,omitempty"`
}

// UpdateWorkspace changes a workspace; nil for an unknown one.
func (a *Admin) UpdateWorkspace(id string, u WorkspaceUpdates) (*Workspace, error) {
	if u.Name != nil {
		if err := checkWorkspaceName(*u.Name); err != nil {
			return nil, err
		}
	}
	if u.Description != nil {
		if err := checkLen("description", *u.Description, 0, 4000); err != nil {
			return nil, err
		}
	}
	if u.Status != nil {
		if err := checkWorkspaceStatus(*u.Status); err != nil {
			return nil, err
		}
	}
	if err := checkMetadata("settings", u.Settings); err != nil {
		return nil, err
	}
	if err := checkMetadata("metadata", u.Metadata); err != nil {
		return nil, err
	}
	var out *Workspace
	err := update(a, &out, func(tx store.Tx) error {
		ws, err := getWorkspace(tx, id)
		if err != nil || ws == nil {
			return err
		}
		limits, err := u.ResourceLimits.apply(ws.ResourceLimits)
		if err != nil {
			return err
		}
		changed := []string{}
		if u.Name != nil {
			ws.Name = *u.Name
			changed = append(changed, "name")
		}
		if u.Description != nil {
			ws.Description = *u.Description
			changed = append(changed, "description")
		}
		if u.Settings != nil {
			ws.Settings = u.Settings
			changed = append(changed, "settings")
		}
		if u.Metadata != nil {
			ws.Metadata = u.Metadata
			changed = append(changed, "metadata")
		}
		if u.Status != nil {
			ws.Status = *u.Status
			changed = append(changed, "status")
		}
		if u.ResourceLimits != nil {
			ws.ResourceLimits = limits
			changed = append(changed, "resource_limits")
		}
		ws.UpdatedAt = FormatTime(a.now())
		if err := store.Put(tx, store.BucketWorkspaces, []byte(id), ws); err != nil {
			return err
		}
		out = ws
		return a.event(tx, EventWorkspaceUpdated, map[string]any{"workspace_id": id, "changed": changed, "status": ws.Status})
	})
	return out, internal(err)
}

// DeleteResult is the result of deleteWorkspace and deleteProject.
type DeleteResult struct {
	Success            bool   `json:"success"`
	ID                 string `json:"id"`
	ArchivedProjects   int    `json:"archived_projects,omitempty"`
	RevokedInvitations int    `json:"revoked_invitations,omitempty"`
	RevokedKeys        int    `json:"revoked_keys,omitempty"`
}

// DeleteWorkspace archives a workspace and its resources: its projects are
// archived, its pending invitations revoked and the API keys scoped to it
// revoked. Members stay for the record. Unknown id: success false.
func (a *Admin) DeleteWorkspace(id, deletedBy string) (DeleteResult, error) {
	res := DeleteResult{ID: id}
	err := update(a, &res, func(tx store.Tx) error {
		ws, err := getWorkspace(tx, id)
		if err != nil || ws == nil {
			return err
		}
		ts := FormatTime(a.now())
		ws.Status, ws.UpdatedAt = WorkspaceArchived, ts
		if err := store.Put(tx, store.BucketWorkspaces, []byte(id), ws); err != nil {
			return err
		}
		if err := eachJSON(tx, store.BucketProjects, func(k []byte, p *Project) (bool, error) {
			if p.WorkspaceID != id || p.Status == ProjectArchived {
				return false, nil
			}
			p.Status, p.UpdatedAt = ProjectArchived, ts
			res.ArchivedProjects++
			// The core area stops taking tasks under the slug.
			return true, a.event(tx, EventProjectArchived, projectEvent(p))
		}); err != nil {
			return err
		}
		if err := eachJSON(tx, store.BucketInvitations, func(k []byte, inv *Invitation) (bool, error) {
			if inv.WorkspaceID != id || inv.Status != InvitePending {
				return false, nil
			}
			inv.Status = InviteRevoked
			res.RevokedInvitations++
			return true, nil
		}); err != nil {
			return err
		}
		var keyIDs []string
		if err := tx.Bucket([]byte(store.BucketKeys)).ForEach(func(k, _ []byte) error {
			key, err := a.loadKey(tx, string(k))
			if err == nil && key != nil && key.WorkspaceID != nil && *key.WorkspaceID == id && key.Status == KeyActive {
				keyIDs = append(keyIDs, key.ID)
			}
			return err
		}); err != nil {
			return err
		}
		for _, kid := range keyIDs {
			key, err := a.loadKey(tx, kid)
			if err != nil {
				return err
			}
			key.Status, key.RevokedAt, key.UpdatedAt = KeyRevoked, &ts, ts
			if err := a.putKey(tx, key, false); err != nil {
				return err
			}
			if err := a.audit(tx, kid, "revoked", deletedBy, map[string]any{"reason": "workspace deleted", "workspace_id": id}); err != nil {
				return err
			}
			if err := a.event(tx, EventKeyRevoked, keyEvent(key)); err != nil {
				return err
			}
			res.RevokedKeys++
		}
		res.Success = true
		return a.event(tx, EventWorkspaceDeleted, map[string]any{"workspace_id": id, "deleted_by": deletedBy})
	})
	return res, internal(err)
}

// eachJSON decodes every record of a bucket into T and writes back the ones
// f reports changed. Only for use inside a write transaction when f may
// change records.
func eachJSON[T any](tx store.Tx, bucket string, f func(k []byte, v *T) (bool, error)) error {
	type change struct {
		k []byte
		v *T
	}
	var changes []change
	err := tx.Bucket([]byte(bucket)).ForEach(func(k, raw []byte) error {
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return err
		}
		changed, err := f(k, v)
		if err != nil {
			return err
		}
		if changed {
			changes = append(changes, change{append([]byte(nil), k...), v})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range changes {
		if err := store.Put(tx, bucket, c.k, c.v); err != nil {
			return err
		}
	}
	return nil
}

// WorkspaceStats is getWorkspaceStats' result.
type WorkspaceStats struct {
	ProjectCount      int   `json:"projectCount"`
	MemberCount       int   `json:"memberCount"`
	ConversationCount int   `json:"conversationCount"`
	APICallsToday     int64 `json:"apiCallsToday"`
	StorageUsed       int64 `json:"storageUsed"`
}

// GetWorkspaceStats counts a workspace's active projects and members, the
// requests made today with keys scoped to it, and the bytes its records
// take in the store. cairn has no conversations, so conversationCount is
// 0. nil for an unknown workspace.
func (a *Admin) GetWorkspaceStats(id string) (*WorkspaceStats, error) {
	var out *WorkspaceStats
	err := a.st.View(func(tx store.Tx) error {
		raw := tx.Bucket([]byte(store.BucketWorkspaces)).Get([]byte(id))
		if raw == nil {
			return nil
		}
		st := &WorkspaceStats{StorageUsed: int64(len(raw))}
		prefix := store.Key([]byte(id), nil)
		c := tx.Bucket([]byte(store.BucketMembers)).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			st.MemberCount++
			st.StorageUsed += int64(len(v))
		}
		if err := tx.Bucket([]byte(store.BucketProjects)).ForEach(func(_, v []byte) error {
			var p Project
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			if p.WorkspaceID == id {
				st.StorageUsed += int64(len(v))
				if p.Status == ProjectActive {
					st.ProjectCount++
				}
			}
			return nil
		}); err != nil {
			return err
		}
		_, _, day := windowStarts(a.now())
		today := day.Format("2006-01-02")
		var scoped []string
		if err := tx.Bucket([]byte(store.BucketKeys)).ForEach(func(k, v []byte) error {
			var sk storedKey
			if err := json.Unmarshal(v, &sk); err != nil {
				return err
			}
			if sk.WorkspaceID != nil && *sk.WorkspaceID == id {
				scoped = append(scoped, string(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, key := range scoped {
			days, err := a.usage.daily(tx, key, today, today)
			if err != nil {
				return err
			}
			for _, d := range days {
				st.APICallsToday += d.Requests
			}
		}
		out = st
		return nil
	})
	return out, internal(err)
}
