package tasks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Sort keys and orders of task_list.
const (
	SortCreated  = "created"
	SortUpdated  = "updated"
	SortPriority = "priority"
	SortProgress = "progress"
	OrderAsc     = "asc"
	OrderDesc    = "desc"
)

// SortKeys lists the accepted sort_by values (for schema enums).
var SortKeys = []string{SortCreated, SortUpdated, SortPriority, SortProgress}

// ListInput is the input of task_list. Empty strings in the single-value
// filters count as absent.
type ListInput struct {
	Project       *string  `json:"project,omitempty"`
	Status        []string `json:"status,omitempty"`
	Priority      []string `json:"priority,omitempty"`
	Assignee      *string  `json:"assignee,omitempty"`
	Label         *string  `json:"label,omitempty"`
	CreatedAfter  *string  `json:"created_after,omitempty"`
	CreatedBefore *string  `json:"created_before,omitempty"`
	Search        *string  `json:"search,omitempty"`
	Limit         *int     `json:"limit,omitempty"`
	Offset        *int     `json:"offset,omitempty"`
	SortBy        *string  `json:"sort_by,omitempty"`
	SortOrder     *string  `json:"sort_order,omitempty"`
}

// ListItem is one task of task_list's output.
type ListItem struct {
	TaskID    string  `json:"task_id"`
	Title     string  `json:"title"`
	Project   string  `json:"project"`
	Status    string  `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Priority  string  `json:"priority" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Progress  float64 `json:"progress"`
	Assignee  string  `json:"assignee"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

// ListOutput is the output of task_list. TotalCount counts every match,
// unless TotalCapped: a search with no other filter stops counting past
// searchTotalCap matches (or offset+limit) when counting the rest would
// cost more than the page (docs/decisions.md D46), and TotalCount is then
// a lower bound. Offset and Limit echo the effective paging.
type ListOutput struct {
	Tasks         []ListItem `json:"tasks"`
	TotalCount    int        `json:"total_count"`
	TotalCapped   bool       `json:"total_capped,omitempty"`
	ReturnedCount int        `json:"returned_count"`
	Offset        int        `json:"offset"`
	Limit         int        `json:"limit"`
}

// listQuery is a validated ListInput.
type listQuery struct {
	project    string
	statuses   []string // nil = any
	priorities []bool   // indexed by priority code; nil = any
	assignee   []byte
	label      []byte
	after      *time.Time
	before     *time.Time
	terms      []string // lower-cased search terms
	limit      int
	offset     int
	sortBy     string
	desc       bool
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (in *ListInput) validate() (*listQuery, error) {
	q := &listQuery{limit: DefaultListLimit, sortBy: SortUpdated, desc: true}
	if p := str(in.Project); p != "" {
		if err := checkSlug("project", p); err != nil {
			return nil, err
		}
		q.project = p
	}
	if in.Status != nil {
		seen := map[string]bool{}
		q.statuses = []string{}
		for i, s := range in.Status {
			if err := checkStatus(fmt.Sprintf("status[%d]", i), s); err != nil {
				return nil, err
			}
			if !seen[s] {
				seen[s] = true
				q.statuses = append(q.statuses, s)
			}
		}
	}
	if in.Priority != nil {
		q.priorities = make([]bool, len(Priorities)+1)
		for i, p := range in.Priority {
			if err := checkPriority(fmt.Sprintf("priority[%d]", i), p); err != nil {
				return nil, err
			}
			q.priorities[priorityCode(p)] = true
		}
	}
	if a := str(in.Assignee); a != "" {
		if err := checkUTF8("assignee", a); err != nil {
			return nil, err
		}
		q.assignee = []byte(a)
	}
	if l := str(in.Label); l != "" {
		if err := checkUTF8("label", l); err != nil {
			return nil, err
		}
		q.label = []byte(l)
	}
	if s := str(in.CreatedAfter); s != "" {
		t, err := parseISOTime("created_after", s)
		if err != nil {
			return nil, err
		}
		q.after = &t
	}
	if s := str(in.CreatedBefore); s != "" {
		t, err := parseISOTime("created_before", s)
		if err != nil {
			return nil, err
		}
		q.before = &t
	}
	if s := str(in.Search); s != "" {
		if err := checkUTF8("search", s); err != nil {
			return nil, err
		}
		q.terms = strings.Fields(strings.ToLower(s))
	}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxListLimit {
			c := "minimum"
			if *in.Limit > MaxListLimit {
				c = "maximum"
			}
			return nil, errs.Invalidf("limit", c, "limit must be between 1 and %d, got %d; page with offset for more", MaxListLimit, *in.Limit)
		}
		q.limit = *in.Limit
	}
	if in.Offset != nil {
		if *in.Offset < 0 {
			return nil, errs.Invalidf("offset", "minimum", "offset must be 0 or more, got %d", *in.Offset)
		}
		q.offset = *in.Offset
	}
	if in.SortBy != nil {
		if !slices.Contains(SortKeys, *in.SortBy) {
			return nil, errs.Invalidf("sort_by", "enum", "sort_by %q is not supported; use one of %s", clip(*in.SortBy), strings.Join(SortKeys, ", ")).With("allowed", SortKeys)
		}
		q.sortBy = *in.SortBy
	}
	if in.SortOrder != nil {
		switch *in.SortOrder {
		case OrderAsc:
			q.desc = false
		case OrderDesc:
			q.desc = true
		default:
			return nil, errs.Invalidf("sort_order", "enum", "sort_order %q is not supported; use asc or desc", clip(*in.SortOrder)).With("allowed", []string{OrderAsc, OrderDesc})
		}
	}
	return q, nil
}

// match applies the filters the candidate enumeration did not already apply.
func (q *listQuery) match(r *rawRecord) bool {
	if q.priorities != nil && (int(r.priority) >= len(q.priorities) || !q.priorities[r.priority]) {
		return false
	}
	if q.assignee != nil && !bytes.Equal(r.assignee, q.assignee) {
		return false
	}
	if q.label != nil {
		found := false
		r.eachLabel(func(l []byte) bool {
			found = bytes.Equal(l, q.label)
			return !found
		})
		if !found {
			return false
		}
	}
	if q.after != nil || q.before != nil {
		created := time.UnixMilli(r.createdMs)
		if q.after != nil && !created.After(*q.after) {
			return false
		}
		if q.before != nil && !created.Before(*q.before) {
			return false
		}
	}
	for _, t := range q.terms {
		if !containsFold(r.title, t) && !containsFold(r.description, t) && !containsFold(r.origin[0], t) {
			return false
		}
	}
	return true
}

func (q *listQuery) key(r *rawRecord) float64 {
	switch q.sortBy {
	case SortCreated:
		return float64(r.createdMs)
	case SortPriority:
		return float64(r.priority)
	case SortProgress:
		return r.progress
	default:
		return float64(r.updatedMs)
	}
}

// hit is a matching task reduced to what sorting needs.
type hit struct {
	num uint64
	key float64
}

// candidates enumerates the tasks that can match q, using the narrowest
// index the filters allow, and calls fn with each stored record.
func candidates(tx kv.Tx, project string, statuses []string, fn func(num uint64, v []byte) error) error {
	tb := tasksBucket(tx)
	// One reused cursor for the point lookups: Bucket.Get allocates a
	// cursor per call, which dominated index-driven scans.
	tc := tb.Cursor()
	fromIndex := func(bucket string, prefix []byte) error {
		c := tx.Bucket([]byte(bucket)).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+8 {
				continue
			}
			num := binary.BigEndian.Uint64(k[len(prefix):])
			v := seekExact(tc, k[len(prefix):])
			if v == nil {
				return fmt.Errorf("tasks: index %s points at missing task %d", bucket, num)
			}
			if err := fn(num, v); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case project != "" && statuses != nil:
		for _, s := range statuses {
			if err := fromIndex(store.BucketTasksByProjectStatus, prefixProjectStatus(project, s)); err != nil {
				return err
			}
		}
		return nil
	case project != "":
		return fromIndex(store.BucketTasksByProject, append([]byte(project), 0))
	case statuses != nil:
		for _, s := range statuses {
			if err := fromIndex(store.BucketTasksByStatus, prefixStatus(s)); err != nil {
				return err
			}
		}
		return nil
	default:
		c := tc
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			if err := fn(binary.BigEndian.Uint64(k), v); err != nil {
				return err
			}
		}
		return nil
	}
}

// List runs task_list. It filters without decoding more than each
// candidate's stored bytes, sorts the matches, and materializes one page.
func (s *Service) List(in ListInput) (ListOutput, error) {
	q, err := in.validate()
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Tasks: []ListItem{}, Offset: q.offset, Limit: q.limit}
	err = ViewSettled(s.st, func(tx kv.Tx) error {
		if listIndexReady(tx) {
			return listPlanned(tx, q, &out)
		}
		return listScan(tx, q, &out, nil, false)
	})
	if err != nil {
		return ListOutput{}, internal(err)
	}
	out.ReturnedCount = len(out.Tasks)
	return out, nil
}

// sortHits orders hits by key (asc or desc), ties by task number ascending,
// so equal keys page stably. Only the first n positions must be right: for
// small pages a bounded selection beats sorting every match.
func sortHits(hits []hit, desc bool, n int) {
	less := func(a, b hit) int {
		if a.key != b.key {
			if (a.key < b.key) != desc {
				return -1
			}
			return 1
		}
		if a.num < b.num {
			return -1
		}
		if a.num > b.num {
			return 1
		}
		return 0
	}
	if n*8 >= len(hits) {
		slices.SortFunc(hits, less)
		return
	}
	// Bounded selection: a heap of the best n whose root is the worst of
	// them; O(len·log n) instead of sorting every match.
	top := slices.Clone(hits[:n])
	worse := func(i, j int) bool { return less(top[i], top[j]) > 0 }
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < n && worse(l, w) {
				w = l
			}
			if r < n && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, h := range hits[n:] {
		if less(h, top[0]) < 0 {
			top[0] = h
			down(0)
		}
	}
	slices.SortFunc(top, less)
	copy(hits, top)
}

// seekExact returns the value stored under key, or nil, using c.
func seekExact(c kv.Cursor, key []byte) []byte {
	k, v := c.Seek(key)
	if k == nil || !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// containsFold reports whether text contains the lower-cased term, ignoring
// case. ASCII text is compared in place — the common case, and the one a
// 100,000-task search must not allocate for; other text is lower-cased.
func containsFold(text []byte, term string) bool {
	ascii := true
	for _, c := range text {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		return strings.Contains(strings.ToLower(string(text)), term)
	}
	n := len(term)
	for i := 0; i+n <= len(text); i++ {
		j := 0
		for ; j < n; j++ {
			c := text[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != term[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
