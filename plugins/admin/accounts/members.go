package accounts

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/mail"
	"sort"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Member roles, most powerful first.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// Member events.
const (
	EventMemberAdded       = "member.added"
	EventMemberRemoved     = "member.removed"
	EventMemberRoleChanged = "member.role_changed"
)

// InvitationTTL is how long an invitation can be accepted (D18).
const InvitationTTL = 7 * 24 * time.Hour

// Invitation statuses.
const (
	InvitePending  = "pending"
	InviteAccepted = "accepted"
	InviteRevoked  = "revoked"
	InviteExpired  = "expired"
)

// Member is a MemberRecord.
type Member struct {
	WorkspaceID string         `json:"workspace_id"`
	UserID      string         `json:"user_id"`
	Role        string         `json:"role"`
	JoinedAt    string         `json:"joined_at"`
	InvitedBy   string         `json:"invited_by"`
	Metadata    map[string]any `json:"metadata"`
}

// CheckRole validates a role name.
func CheckRole(field, role string) error {
	switch role {
	case RoleOwner, RoleAdmin, RoleMember, RoleViewer:
		return nil
	}
	return errs.Invalidf(field, "enum", "%s must be one of owner, admin, member, viewer (got %q)", field, role)
}

func memberKey(ws, user string) []byte { return store.Key([]byte(ws), []byte(user)) }

func putMember(tx store.Tx, m Member) error {
	return store.Put(tx, store.BucketMembers, memberKey(m.WorkspaceID, m.UserID), m)
}

func getMember(tx store.Tx, ws, user string) (*Member, error) {
	var m Member
	found, err := store.Get(tx, store.BucketMembers, memberKey(ws, user), &m)
	if err != nil || !found {
		return nil, err
	}
	return &m, nil
}

func members(tx store.Tx, ws string) ([]Member, error) {
	var out []Member
	prefix := store.Key([]byte(ws), nil)
	c := tx.Bucket([]byte(store.BucketMembers)).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var m Member
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func eachMember(tx store.Tx, f func(m Member)) error {
	return tx.Bucket([]byte(store.BucketMembers)).ForEach(func(_, v []byte) error {
		var m Member
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		f(m)
		return nil
	})
}

func countRole(ms []Member, role string) int {
	n := 0
	for _, m := range ms {
		if m.Role == role {
			n++
		}
	}
	return n
}

// authorize applies the membership rules people expect: only owners and
// admins manage members; only an owner grants (or takes away) the owner
// role; an admin cannot touch an owner. A workspace without any owner can
// be claimed by anyone (bootstrap after every owner left is impossible by
// the last-owner rule, so this only covers hand-made stores). The local
// operator holds every right (D22).
func authorize(ms []Member, by Actor, targetRole, newRole string) error {
	if by.Operator || countRole(ms, RoleOwner) == 0 {
		return nil
	}
	actor := by.ID
	if actor == "" {
		return errs.Invalid("actor", "required", "say who is acting (a member with the owner or admin role)")
	}
	var role string
	for _, m := range ms {
		if m.UserID == actor {
			role = m.Role
		}
	}
	if role != RoleOwner && role != RoleAdmin {
		return Forbidden(RoleAdmin, "%s is not an owner or admin of this workspace and cannot manage its members", actor).With("field", "actor")
	}
	if (newRole == RoleOwner || targetRole == RoleOwner) && role != RoleOwner {
		return Forbidden(RoleOwner, "only an owner can grant the owner role or change an owner; %s is %s", actor, role).With("field", "actor")
	}
	return nil
}

// AddMemberOptions are addMember's parameters.
type AddMemberOptions struct {
	UserID    string         `json:"user_id"`
	Role      string         `json:"role"`
	InvitedBy string         `json:"invited_by"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Operator marks the inviter as the local operator, who needs no role.
	Operator bool `json:"-"`
}

// AddMember adds a user to a workspace. The inviter must be an owner or
// admin; only an owner adds an owner; max_members is enforced.
func (a *Admin) AddMember(workspaceID string, o AddMemberOptions) (*Member, error) {
	if err := checkLen("user_id", o.UserID, 1, 255); err != nil {
		return nil, err
	}
	if err := CheckRole("role", o.Role); err != nil {
		return nil, err
	}
	if err := checkMetadata("metadata", o.Metadata); err != nil {
		return nil, err
	}
	var out *Member
	err := update(a, &out, func(tx store.Tx) error {
		ws, err := liveWorkspace(tx, workspaceID)
		if err != nil {
			return err
		}
		ms, err := members(tx, workspaceID)
		if err != nil {
			return err
		}
		if err := authorize(ms, Actor{ID: o.InvitedBy, Operator: o.Operator}, "", o.Role); err != nil {
			return errorWithField(err, "invited_by")
		}
		m, err := a.addMemberTx(tx, ws, ms, o.UserID, o.Role, o.InvitedBy, o.Metadata)
		out = m
		return err
	})
	return out, internal(err)
}

func errorWithField(err error, field string) error {
	if e, ok := errs.As(err); ok && e.Details["field"] == "actor" {
		return e.With("field", field)
	}
	return err
}

func (a *Admin) addMemberTx(tx store.Tx, ws *Workspace, ms []Member, user, role, by string, meta map[string]any) (*Member, error) {
	for _, m := range ms {
		if m.UserID == user {
			return nil, errs.Conflictf(errs.Conflict, "%s is already a member of workspace %s (role %s); use updateMemberRole to change the role", user, ws.ID, m.Role)
		}
	}
	if len(ms) >= ws.ResourceLimits.MaxMembers {
		return nil, errs.Conflictf(errs.LimitExceeded, "workspace %s has reached its max_members limit (%d); raise resource_limits.max_members or remove a member", ws.ID, ws.ResourceLimits.MaxMembers)
	}
	m := Member{WorkspaceID: ws.ID, UserID: user, Role: role, JoinedAt: FormatTime(a.now()), InvitedBy: by, Metadata: orEmpty(meta)}
	if err := putMember(tx, m); err != nil {
		return nil, err
	}
	return &m, a.event(tx, EventMemberAdded, map[string]any{"workspace_id": ws.ID, "user_id": user, "role": role, "invited_by": by})
}

// RemoveMember removes a member; false when the user is not a member. The
// actor must be an owner or admin, or the member leaving. The last owner
// cannot be removed.
func (a *Admin) RemoveMember(workspaceID, userID, actor string) (bool, error) {
	return a.RemoveMemberAs(workspaceID, userID, Actor{ID: actor})
}

// RemoveMemberAs is RemoveMember with the actor's rights spelled out.
func (a *Admin) RemoveMemberAs(workspaceID, userID string, by Actor) (bool, error) {
	actor := by.ID
	removed := false
	err := update(a, &removed, func(tx store.Tx) error {
		if ws, err := getWorkspace(tx, workspaceID); err != nil || ws == nil {
			return err
		}
		ms, err := members(tx, workspaceID)
		if err != nil {
			return err
		}
		var target *Member
		for i := range ms {
			if ms[i].UserID == userID {
				target = &ms[i]
			}
		}
		if target == nil {
			return nil
		}
		if target.Role == RoleOwner && countRole(ms, RoleOwner) == 1 {
			return errs.Conflictf(errs.Conflict, "%s is the last owner of workspace %s and cannot be removed; make another member an owner first", userID, workspaceID).With("field", "user_id")
		}
		if actor != userID {
			if err := authorize(ms, by, target.Role, ""); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte(store.BucketMembers)).Delete(memberKey(workspaceID, userID)); err != nil {
			return err
		}
		removed = true
		return a.event(tx, EventMemberRemoved, map[string]any{"workspace_id": workspaceID, "user_id": userID, "removed_by": actor})
	})
	return removed, internal(err)
}

// GetMember returns the member record or nil.
func (a *Admin) GetMember(workspaceID, userID string) (*Member, error) {
	var out *Member
	err := a.st.View(func(tx store.Tx) error {
		m, err := getMember(tx, workspaceID, userID)
		out = m
		return err
	})
	return out, internal(err)
}

// ListMembersOptions filter listMembers.
type ListMembersOptions struct {
	Role string `json:"role,omitempty"`
	Page
}

// ListMembers lists a workspace's members, owners first, then by join
// time; nil for an unknown workspace.
func (a *Admin) ListMembers(workspaceID string, o ListMembersOptions) ([]Member, error) {
	p, err := o.Page.check()
	if err != nil {
		return nil, err
	}
	if o.Role != "" {
		if err := CheckRole("role", o.Role); err != nil {
			return nil, err
		}
	}
	rank := map[string]int{RoleOwner: 0, RoleAdmin: 1, RoleMember: 2, RoleViewer: 3}
	return listInWorkspace(a, workspaceID, p, func(tx store.Tx, add func(Member)) error {
		ms, err := members(tx, workspaceID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if o.Role == "" || m.Role == o.Role {
				add(m)
			}
		}
		return nil
	}, func(x, y Member) bool {
		if rank[x.Role] != rank[y.Role] {
			return rank[x.Role] < rank[y.Role]
		}
		if x.JoinedAt != y.JoinedAt {
			return x.JoinedAt < y.JoinedAt
		}
		return x.UserID < y.UserID
	})
}

// UpdateMemberRole changes a member's role. The actor must be an owner or
// admin; only an owner grants or changes the owner role; the last owner
// cannot be demoted. 404 when the user is not a member.
func (a *Admin) UpdateMemberRole(workspaceID, userID, role, actor string) (*Member, error) {
	return a.UpdateMemberRoleAs(workspaceID, userID, role, Actor{ID: actor})
}

// UpdateMemberRoleAs is UpdateMemberRole with the actor's rights spelled
// out.
func (a *Admin) UpdateMemberRoleAs(workspaceID, userID, role string, by Actor) (*Member, error) {
	actor := by.ID
	if err := CheckRole("role", role); err != nil {
		return nil, err
	}
	var out *Member
	err := update(a, &out, func(tx store.Tx) error {
		if _, err := liveWorkspace(tx, workspaceID); err != nil {
			return err
		}
		ms, err := members(tx, workspaceID)
		if err != nil {
			return err
		}
		var target *Member
		for i := range ms {
			if ms[i].UserID == userID {
				target = &ms[i]
			}
		}
		if target == nil {
			return errs.NotFoundf(errs.NotFound, "user_id", "%s is not a member of workspace %s", userID, workspaceID)
		}
		if target.Role == role {
			out = target
			return nil
		}
		if target.Role == RoleOwner && countRole(ms, RoleOwner) == 1 {
			return errs.Conflictf(errs.Conflict, "%s is the last owner of workspace %s and cannot be demoted; make another member an owner first", userID, workspaceID).With("field", "role")
		}
		if err := authorize(ms, by, target.Role, role); err != nil {
			return err
		}
		old := target.Role
		target.Role = role
		if err := putMember(tx, *target); err != nil {
			return err
		}
		out = target
		return a.event(tx, EventMemberRoleChanged, map[string]any{"workspace_id": workspaceID, "user_id": userID, "old_role": old, "role": role, "changed_by": actor})
	})
	return out, internal(err)
}

// Invitation is an InvitationRecord. Token is the plaintext, present only
// on the value InviteMember returns; the store keeps its SHA-256.
type Invitation struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	Email       string  `json:"email"`
	Role        string  `json:"role"`
	InvitedBy   string  `json:"invited_by"`
	Message     string  `json:"message"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	ExpiresAt   string  `json:"expires_at"`
	AcceptedAt  *string `json:"accepted_at" jsonschema:"oneof_type=string;null"`
	AcceptedBy  *string `json:"accepted_by" jsonschema:"oneof_type=string;null"`
	Token       string  `json:"token,omitempty"`
	// SecretNotice replaces Token in a repeat of a keyed call made after
	// the token was dropped.
	SecretNotice string `json:"secret_notice,omitempty"`
}

type storedInvitation struct {
	Invitation
	TokenHash string `json:"token_hash"`
}

// InviteMemberOptions are inviteMember's parameters.
type InviteMemberOptions struct {
	Email     string `json:"email"`
	Role      string `json:"role"`
	InvitedBy string `json:"invited_by"`
	Message   string `json:"message,omitempty"`
	// Operator marks the inviter as the local operator, who needs no role.
	Operator bool `json:"-"`
}

func hashToken(t string) string {
	s := sha256.Sum256([]byte(t))
	return hex.EncodeToString(s[:])
}

// InviteMember creates an invitation. The token carries 256 random bits,
// is returned once and stored only as its SHA-256; it can be accepted once
// within InvitationTTL. No e-mail is sent.
func (a *Admin) InviteMember(workspaceID string, o InviteMemberOptions) (*Invitation, error) {
	if err := checkLen("email", o.Email, 3, 254); err != nil {
		return nil, err
	}
	if addr, err := mail.ParseAddress(o.Email); err != nil || addr.Address != o.Email {
		return nil, errs.Invalidf("email", "format", "email must be a plain address such as dev@example.com (got %q)", o.Email)
	}
	if err := CheckRole("role", o.Role); err != nil {
		return nil, err
	}
	if err := checkLen("message", o.Message, 0, 2000); err != nil {
		return nil, err
	}
	var out *Invitation
	err := update(a, &out, func(tx store.Tx) error {
		if _, err := liveWorkspace(tx, workspaceID); err != nil {
			return err
		}
		ms, err := members(tx, workspaceID)
		if err != nil {
			return err
		}
		if err := authorize(ms, Actor{ID: o.InvitedBy, Operator: o.Operator}, "", o.Role); err != nil {
			return errorWithField(err, "invited_by")
		}
		token := "inv_" + base64.RawURLEncoding.EncodeToString(randomBytes(32))
		now := a.now()
		inv := Invitation{
			ID: newID("inv"), WorkspaceID: workspaceID, Email: o.Email, Role: o.Role, InvitedBy: o.InvitedBy,
			Message: o.Message, Status: InvitePending, CreatedAt: FormatTime(now), ExpiresAt: FormatTime(now.Add(InvitationTTL)),
		}
		th := hashToken(token)
		if err := store.Put(tx, store.BucketInvitations, []byte(inv.ID), storedInvitation{Invitation: inv, TokenHash: th}); err != nil {
			return err
		}
		if err := tx.Bucket([]byte(store.BucketInviteHash)).Put([]byte(th), []byte(inv.ID)); err != nil {
			return err
		}
		inv.Token = token
		out = &inv
		return nil
	})
	return out, internal(err)
}

// Invitation acceptance failure reasons.
const (
	InviteReasonInvalid  = "invalid"
	InviteReasonUsed     = "already_used"
	InviteReasonRevoked  = "revoked"
	InviteReasonExpired  = "expired"
	InviteReasonArchived = "workspace_archived"
)

// AcceptResult is acceptInvitation's result.
type AcceptResult struct {
	Success     bool    `json:"success"`
	Reason      string  `json:"reason,omitempty"`
	WorkspaceID string  `json:"workspace_id,omitempty"`
	Member      *Member `json:"member,omitempty"`
}

// AcceptInvitation redeems a token: once, before it expires. The new
// member's user id is userID, or the invitation's e-mail when empty.
func (a *Admin) AcceptInvitation(token, userID string) (AcceptResult, error) {
	var res AcceptResult
	if len(token) > 256 {
		res.Reason = InviteReasonInvalid
		return res, nil
	}
	th := hashToken(token)
	err := update(a, &res, func(tx store.Tx) error {
		id := tx.Bucket([]byte(store.BucketInviteHash)).Get([]byte(th))
		if id == nil {
			res.Reason = InviteReasonInvalid
			return nil
		}
		var si storedInvitation
		if found, err := store.Get(tx, store.BucketInvitations, id, &si); err != nil || !found {
			res.Reason = InviteReasonInvalid
			return err
		}
		inv := si.Invitation
		res.WorkspaceID = inv.WorkspaceID
		exp, _ := ParseTime(inv.ExpiresAt)
		switch {
		case inv.Status == InviteAccepted:
			res.Reason = InviteReasonUsed
			return nil
		case inv.Status == InviteRevoked:
			res.Reason = InviteReasonRevoked
			return nil
		case inv.Status == InviteExpired || !a.now().Before(exp):
			res.Reason = InviteReasonExpired
			return nil
		}
		ws, err := getWorkspace(tx, inv.WorkspaceID)
		if err != nil {
			return err
		}
		if ws == nil || ws.Status == WorkspaceArchived {
			res.Reason = InviteReasonArchived
			return nil
		}
		user := userID
		if user == "" {
			user = inv.Email
		}
		ms, err := members(tx, inv.WorkspaceID)
		if err != nil {
			return err
		}
		m, err := a.addMemberTx(tx, ws, ms, user, inv.Role, inv.InvitedBy, map[string]any{"invitation_id": inv.ID})
		if err != nil {
			return err
		}
		at := FormatTime(a.now())
		si.Status, si.AcceptedAt, si.AcceptedBy = InviteAccepted, &at, &user
		if err := store.Put(tx, store.BucketInvitations, id, si); err != nil {
			return err
		}
		res.Success, res.Member = true, m
		return nil
	})
	return res, internal(err)
}

// GetInvitation returns an invitation (never its token) or nil.
func (a *Admin) GetInvitation(invitationID string) (*Invitation, error) {
	var out *Invitation
	err := a.st.View(func(tx store.Tx) error {
		var si storedInvitation
		found, err := store.Get(tx, store.BucketInvitations, []byte(invitationID), &si)
		if found && err == nil {
			inv := si.Invitation
			out = &inv
		}
		return err
	})
	return out, internal(err)
}

// RevokeInvitation revokes a pending invitation; false when it is unknown
// or no longer pending.
func (a *Admin) RevokeInvitation(invitationID string) (bool, error) {
	ok := false
	err := update(a, &ok, func(tx store.Tx) error {
		var si storedInvitation
		found, err := store.Get(tx, store.BucketInvitations, []byte(invitationID), &si)
		if err != nil || !found || si.Status != InvitePending {
			return err
		}
		si.Status = InviteRevoked
		ok = true
		return store.Put(tx, store.BucketInvitations, []byte(invitationID), si)
	})
	return ok, internal(err)
}

// ListInvitationsOptions filter listInvitations.
type ListInvitationsOptions struct {
	Status string `json:"status,omitempty"`
	Page
}

// ListInvitations lists a workspace's invitations, newest first, with
// pending ones past their expiry reported as expired. Tokens are never
// listed. nil for an unknown workspace.
func (a *Admin) ListInvitations(workspaceID string, o ListInvitationsOptions) ([]Invitation, error) {
	p, err := o.Page.check()
	if err != nil {
		return nil, err
	}
	switch o.Status {
	case "", InvitePending, InviteAccepted, InviteRevoked, InviteExpired:
	default:
		return nil, errs.Invalidf("status", "enum", "status must be one of pending, accepted, revoked, expired (got %q)", o.Status)
	}
	return listInWorkspace(a, workspaceID, p, func(tx store.Tx, add func(Invitation)) error {
		return tx.Bucket([]byte(store.BucketInvitations)).ForEach(func(_, v []byte) error {
			var si storedInvitation
			if err := json.Unmarshal(v, &si); err != nil {
				return err
			}
			inv := si.Invitation
			if inv.WorkspaceID != workspaceID {
				return nil
			}
			if exp, err := ParseTime(inv.ExpiresAt); inv.Status == InvitePending && err == nil && !a.now().Before(exp) {
				inv.Status = InviteExpired
			}
			if o.Status == "" || inv.Status == o.Status {
				add(inv)
			}
			return nil
		})
	}, func(x, y Invitation) bool { return x.CreatedAt > y.CreatedAt })
}

// Empty reports a refused acceptance: a keyed call records nothing for
// it, so the same key may carry the corrected call.
func (r AcceptResult) Empty() bool { return !r.Success }

// listInWorkspace reads a workspace's items in one view transaction: nil
// for an unknown workspace, else what collect adds, sorted stably by less
// and paged. A read error returns no items, never a partial list.
func listInWorkspace[T any](a *Admin, workspaceID string, p Page, collect func(tx store.Tx, add func(T)) error, less func(x, y T) bool) ([]T, error) {
	var out []T
	err := a.st.View(func(tx store.Tx) error {
		if ws, err := getWorkspace(tx, workspaceID); err != nil || ws == nil {
			return err
		}
		out = []T{}
		return collect(tx, func(v T) { out = append(out, v) })
	})
	if err != nil || out == nil {
		return nil, internal(err)
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return paginate(out, p), nil
}
