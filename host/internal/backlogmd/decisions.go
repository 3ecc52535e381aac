package backlogmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A Backlog.md board's decisions live in decisions/, decision-<n> -
// <title>.md. cairn's import keeps them as thought records of type
// decision on a Decisions task labelled DecisionsLabel (docs/decisions.md
// D41); the export writes that task's records back as decision files and
// not the task itself, so that the board read back again makes the same
// task and records.

// DecisionsLabel marks the task that holds a board's decisions.
const DecisionsLabel = "backlog-decisions"

// DecisionsDir is the board's decisions folder.
const DecisionsDir = "decisions"

// decisionMeta is the metadata key cairn's import files a decision's
// fields under.
const decisionMeta = "backlog_decision"

// IsDecisions reports whether t is the task that holds the decisions.
func IsDecisions(t Task) bool { return slices.Contains(t.Labels, DecisionsLabel) }

// Record is a thought record of type decision as thought_record_list
// shows it.
type Record struct {
	Content       string          `json:"content"`
	ChainPosition int             `json:"chain_position"`
	Metadata      json.RawMessage `json:"metadata"`
}

// decision is one decision file's content.
type decision struct {
	id, title, date, status string
	body                    strings.Builder
}

// decisionFields reads what the import kept of a decision's file.
type decisionFields struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Date   string `json:"date"`
	Status string `json:"status"`
	Empty  bool   `json:"empty"`
}

// Decisions are the decision files of the records, oldest first: the
// records of one imported decision (one per part) make its file; a
// record recorded in cairn makes a file of its own, numbered after the
// imported ones, titled by its first line.
func Decisions(records []Record) map[string][]byte {
	sort.SliceStable(records, func(i, j int) bool { return records[i].ChainPosition < records[j].ChainPosition })
	var order []*decision
	byID := map[string]*decision{}
	most := 0
	var own []Record
	for _, r := range records {
		var meta map[string]decisionFields
		_ = json.Unmarshal(r.Metadata, &meta)
		f, ok := meta[decisionMeta]
		if !ok || f.ID == "" {
			own = append(own, r)
			continue
		}
		d := byID[f.ID]
		if d == nil {
			d = &decision{id: f.ID, title: f.Title, date: f.Date, status: f.Status}
			byID[f.ID] = d
			order = append(order, d)
			if n, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(f.ID), "decision-")); err == nil && n > most {
				most = n
			}
		}
		if !f.Empty {
			d.body.WriteString(r.Content)
		}
	}
	for _, r := range own {
		most++
		title, _, _ := strings.Cut(strings.TrimSpace(r.Content), "\n")
		d := &decision{id: fmt.Sprintf("decision-%d", most), title: strings.TrimLeft(title, "# ")}
		d.body.WriteString(r.Content)
		order = append(order, d)
	}
	out := map[string][]byte{}
	for _, d := range order {
		out[path.Join(DecisionsDir, FileName(d.id, d.title))] = d.file()
	}
	return out
}

// file is the decision's file: frontmatter with sorted keys, then its
// body as it was written.
func (d *decision) file() []byte {
	fields := map[string]string{"id": d.id, "title": d.title, "date": d.date, "status": d.status}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range []string{"date", "id", "status", "title"} {
		if fields[k] != "" {
			m.Content = append(m.Content, str(k), str(fields[k]))
		}
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(m)
	_ = enc.Close()
	b.WriteString("---\n")
	b.WriteString(d.body.String())
	return b.Bytes()
}
