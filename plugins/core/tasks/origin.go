package tasks

// Origin is where an imported task came from (docs/decisions.md D41): its
// id in its source as the source spells it ("42.3", "back-222.1"), the
// source's format, and its times there when the source has them. It is
// stored with the task, shown by task_get and found by task_list's search.
type Origin struct {
	ID        string `json:"id"`
	Format    string `json:"format"`
	CreatedAt string `json:"created_at,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

// searched is the text task_list's search finds a task by besides its
// title: the description and, on its own line, the source id, so that a
// search for "42.3" finds the task imported as task-master's 42.3. A term
// never holds a newline, so it matches the id or the description, never
// across both.
func (r *record) searched() string {
	if r.origin.ID == "" {
		return r.description
	}
	return r.description + "\n" + r.origin.ID
}

// searched is record.searched on a stored record's bytes.
func (r *rawRecord) searched() string {
	if len(r.origin[0]) == 0 {
		return string(r.description)
	}
	return string(r.description) + "\n" + string(r.origin[0])
}
