package engine

import (
	"fmt"
	"sort"
	"time"
)

// Binding links a project to a roadmap.
type Binding struct {
	ProjectName  string `json:"projectName"`
	RoadmapID    string `json:"roadmapId,omitempty"`
	Pace         string `json:"pace,omitempty"`
	ProjectPath  string `json:"projectPath,omitempty"`
	LastSyncedAt string `json:"lastSyncedAt"`
}

// BindingInput holds the optional fields of SyncProjectBinding; nil leaves
// a stored field unchanged.
type BindingInput struct {
	RoadmapID   *string `json:"roadmapId,omitempty"`
	Pace        *string `json:"pace,omitempty"`
	ProjectPath *string `json:"projectPath,omitempty"`
}

// BindingSummary is GetBindingSummary's result.
type BindingSummary struct {
	TotalBindings  int       `json:"totalBindings"`
	WithRoadmap    int       `json:"withRoadmap"`
	WithoutRoadmap int       `json:"withoutRoadmap"`
	Bindings       []Binding `json:"bindings"`
}

// SyncProjectBinding stores (creates or updates) the binding of a project
// and persists it; it returns the binding with lastSyncedAt.
func (e *Engine) SyncProjectBinding(projectName string, in BindingInput) (*Binding, error) {
	if err := checkName("projectName", projectName); err != nil {
		return nil, err
	}
	for f, v := range map[string]*string{"roadmapId": in.RoadmapID, "pace": in.Pace, "projectPath": in.ProjectPath} {
		if v != nil {
			if err := checkText(f, *v, false, maxShortText*4); err != nil {
				return nil, err
			}
		}
	}
	var out Binding
	err := e.write(func(s *state, now time.Time, _ func(string, any)) error {
		b := s.Bindings[projectName]
		b.ProjectName = projectName
		if in.RoadmapID != nil {
			b.RoadmapID = *in.RoadmapID
		}
		if in.Pace != nil {
			b.Pace = *in.Pace
		}
		if in.ProjectPath != nil {
			b.ProjectPath = *in.ProjectPath
		}
		b.LastSyncedAt = iso(now)
		s.Bindings[projectName] = b
		out = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetProjectBinding returns the binding or nil.
func (e *Engine) GetProjectBinding(projectName string) (*Binding, error) {
	if err := checkName("projectName", projectName); err != nil {
		return nil, err
	}
	var out *Binding
	err := e.read(func(s *state, _ time.Time) error {
		if b, ok := s.Bindings[projectName]; ok {
			out = &b
		}
		return nil
	})
	return out, err
}

// RemoveProjectBinding deletes a binding; false when there was none.
func (e *Engine) RemoveProjectBinding(projectName string) (bool, error) {
	if err := checkName("projectName", projectName); err != nil {
		return false, err
	}
	removed := false
	err := e.write(func(s *state, _ time.Time, _ func(string, any)) error {
		_, removed = s.Bindings[projectName]
		delete(s.Bindings, projectName)
		return nil
	})
	return removed && err == nil, err
}

// GetBindingSummary counts bindings with and without a roadmap.
func (e *Engine) GetBindingSummary() (*BindingSummary, error) {
	out := &BindingSummary{Bindings: []Binding{}}
	err := e.read(func(s *state, _ time.Time) error {
		for _, b := range s.Bindings {
			out.Bindings = append(out.Bindings, b)
			if b.RoadmapID != "" {
				out.WithRoadmap++
			} else {
				out.WithoutRoadmap++
			}
		}
		return nil
	})
	sort.Slice(out.Bindings, func(i, j int) bool { return out.Bindings[i].ProjectName < out.Bindings[j].ProjectName })
	out.TotalBindings = len(out.Bindings)
	return out, err
}

// Lease is a timed execution lease on a task.
type Lease struct {
	LeaseID    string   `json:"leaseId"`
	TaskID     string   `json:"taskId"`
	Scope      []string `json:"scope"`
	IssuedAt   string   `json:"issuedAt" description:"ISO-8601 UTC."`
	ExpiresAt  string   `json:"expiresAt" description:"issuedAt plus LEASE_DURATION_MS (one hour)."`
	ReturnedAt string   `json:"returnedAt,omitempty"`
	Result     string   `json:"result,omitempty"`
}

// activeAt: neither returned nor expired at now.
func (l Lease) activeAt(now time.Time) bool {
	if l.ReturnedAt != "" {
		return false
	}
	exp := parseISO(l.ExpiresAt)
	return !exp.IsZero() && now.Before(exp)
}

// CreateLease issues a lease on taskId for LeaseDurationMS and persists it.
func (e *Engine) CreateLease(taskID string, scope []string) (*Lease, error) {
	return e.createLease(Call{}, taskID, scope)
}

func (e *Engine) createLease(c Call, taskID string, scope []string) (*Lease, error) {
	if err := checkText("taskId", taskID, true, maxShortText); err != nil {
		return nil, err
	}
	if err := checkList("scope", scope); err != nil {
		return nil, err
	}
	k := keyFor(c, "lease.issue", map[string]any{"taskId": taskID, "scope": scope})
	out, _, err := writeKeyed(e, k, func(s *state, now time.Time, emit func(string, any)) (Lease, error) {
		out := Lease{
			LeaseID:   fmt.Sprintf("L-%d", s.next("lease")),
			TaskID:    taskID,
			Scope:     append([]string{}, scope...),
			IssuedAt:  iso(now),
			ExpiresAt: iso(now.Add(LeaseDurationMS * time.Millisecond)),
		}
		s.Leases = append(s.Leases, out)
		emit(EventLeaseIssued, out)
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ReturnLease returns an active lease with a result (default "completed").
// It is false for an unknown, already returned or expired lease: expired
// leases are not active and are cleaned up by evolution.
func (e *Engine) ReturnLease(leaseID, result string) (bool, error) {
	l, err := e.returnLease(Call{}, leaseID, result)
	return l != nil && err == nil, err
}

// returnLease is ReturnLease returning the returned lease (nil when there
// was no active lease with that id).
func (e *Engine) returnLease(c Call, leaseID, result string) (*Lease, error) {
	if err := checkText("leaseId", leaseID, true, maxShortText); err != nil {
		return nil, err
	}
	if err := checkText("result", result, false, maxTextLen); err != nil {
		return nil, err
	}
	if result == "" {
		result = "completed"
	}
	k := keyFor(c, "lease.return", map[string]any{"leaseId": leaseID, "result": result})
	out, _, err := writeKeyed(e, k, func(s *state, now time.Time, emit func(string, any)) (*Lease, error) {
		for i := range s.Leases {
			l := &s.Leases[i]
			if l.LeaseID == leaseID && l.activeAt(now) {
				l.ReturnedAt, l.Result = iso(now), result
				c := *l
				c.Scope = append([]string{}, l.Scope...)
				emit(EventLeaseReturned, c)
				return &c, nil
			}
		}
		return nil, errUnchanged
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListActiveLeases lists the leases neither expired nor returned, oldest
// first.
func (e *Engine) ListActiveLeases() ([]Lease, error) {
	out := []Lease{}
	err := e.read(func(s *state, now time.Time) error {
		for _, l := range s.Leases {
			if l.activeAt(now) {
				l.Scope = append([]string{}, l.Scope...)
				out = append(out, l)
			}
		}
		return nil
	})
	return out, err
}
