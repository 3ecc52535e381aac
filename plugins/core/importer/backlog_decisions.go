package importer

import (
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A Backlog.md board keeps its decisions in decisions/, one file each,
// decision-<n> - <title>.md: frontmatter (id, title, date, status) and a
// markdown body (Context, Decision, Consequences). They are not tasks; the
// import keeps each as thought records of type decision on one task per
// project, Decisions, that it creates for them (docs/decisions.md D41): a
// decision is part of the project's trail, hash-chained like any record,
// while Backlog.md ties it to no task of its own to hang it on. The
// holder task carries the label DecisionsLabel, by which cairn's markdown
// export finds it and writes its records back to decisions/.

// Decisions task: its key in the import, its title, label and status.
const (
	DecisionsKey    = "decisions"
	DecisionsTitle  = "Decisions"
	DecisionsLabel  = "backlog-decisions"
	decisionsStatus = "done"
	// DecisionPart bounds one record's content: a longer decision is
	// kept whole in consecutive records, numbered in their metadata.
	DecisionPart = 5000
)

// decisionsDescription is the holder task's description.
const decisionsDescription = "The decisions of the Backlog.md board, imported from its decisions/ folder: each is a thought record of type decision on this task."

// Decision is one decision file of a board.
type Decision struct {
	Where Where
	// ID is the decision's id as the file spells it (decision-3).
	ID, Title, Date, Status string
	// Body is the file's text after its frontmatter, as written.
	Body string
}

// Parts cuts the decision's body into the contents of its records, each
// at most DecisionPart characters; an empty body is one record holding
// the title (a record is never empty).
func (d Decision) Parts() []string {
	body := d.Body
	if body == "" {
		return []string{d.Title}
	}
	var parts []string
	for body != "" {
		cut, n := 0, 0
		for cut < len(body) && n < DecisionPart {
			_, size := utf8.DecodeRuneInString(body[cut:])
			cut += size
			n++
		}
		parts = append(parts, body[:cut])
		body = body[cut:]
	}
	return parts
}

// decisionsTask is the task that holds a board's decisions.
func decisionsTask(shown string) Task {
	desc := decisionsDescription
	return Task{Key: DecisionsKey, Where: Where{File: shown}, Title: DecisionsTitle, Description: &desc,
		Labels: []string{DecisionsLabel}, Status: decisionsStatus, Source: "decisions"}
}

// ReadBacklogDecisions reads the decision files of the board in the
// folder at dir (none when it has no decisions/ folder), in the order of
// their numbers; a malformed file is refused naming it and the field.
func ReadBacklogDecisions(dir string) ([]Decision, error) {
	b, err := openBacklog(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = b.close() }()
	return b.decisions()
}

// decisions reads the board's decision files.
func (b *backlogBoard) decisions() ([]Decision, error) {
	if b.decisionsDir == nil {
		return nil, nil
	}
	names, err := folderNames(b.decisionsDir)
	if err != nil {
		return nil, err
	}
	var out []Decision
	for _, name := range names {
		if !strings.HasPrefix(strings.ToLower(name), "decision-") {
			continue
		}
		shown := path.Join(b.decisionsDir.shown, name)
		data, err := readBacklogFile(b.decisionsDir.dir, name, shown)
		if err != nil {
			return nil, err
		}
		d, err := parseDecision(shown, data)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	ids := backlogIDs{prefix: "decision"}
	sort.SliceStable(out, func(i, j int) bool {
		ki, _ := ids.key(Where{}, "id", out[i].ID)
		kj, _ := ids.key(Where{}, "id", out[j].ID)
		return ids.idLess(ki, kj)
	})
	return out, nil
}

// parseDecision reads one decision file.
func parseDecision(file string, data []byte) (Decision, error) {
	front, body, line, err := splitFrontmatter(file, data)
	if err != nil {
		return Decision{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return Decision{}, Refuse(Where{File: file, Line: 2}, "", "format", "the frontmatter is not YAML: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Decision{}, Refuse(Where{File: file, Line: 1}, "", "format", "the frontmatter must be a YAML mapping of fields (id, title, date, status)")
	}
	d := Decision{Where: Where{File: file}, Body: string(body)}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		w := Where{File: file, Line: line + v.Line - 1}
		var dst *string
		switch k {
		case "id":
			dst = &d.ID
		case "title":
			dst = &d.Title
		case "date":
			dst = &d.Date
		case "status":
			dst = &d.Status
		default:
			continue
		}
		s, err := scalar(w, k, v)
		if err != nil {
			return Decision{}, err
		}
		*dst = s
		if k == "id" {
			if _, err := (backlogIDs{prefix: "decision"}).key(w, k, s); err != nil || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "decision-") {
				return Decision{}, Refuse(w, k, "pattern", "id %q is not a decision id such as decision-3", s)
			}
		}
	}
	switch {
	case d.ID == "":
		return Decision{}, Refuse(Where{File: file, Line: 1}, "id", "required", "the frontmatter has no id (decision-<n>)")
	case d.Title == "":
		return Decision{}, Refuse(Where{File: file, Line: 1}, "title", "required", "the frontmatter has no title")
	}
	return d, nil
}
