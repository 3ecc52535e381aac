package backlogmd

import (
	"bytes"
	"path"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The description section as Backlog.md fences it; cairn's import reads
// the text between the fences back exactly.
const (
	descHead = "## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n"
	descTail = "\n<!-- SECTION:DESCRIPTION:END -->\n"
)

// Path is where a task's file lies in the board, slash-separated.
func Path(t Task) string { return path.Join(folderOf(t.Status), FileName(t.TaskID, t.Title)) }

// File is a task's file: YAML frontmatter with its keys sorted, then its
// description, fenced as Backlog.md fences it. Only the task decides the
// bytes: no time of the export, no order of a map.
func File(t Task) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(frontmatter(t))
	b.WriteString("---\n")
	if t.Description != "" {
		b.WriteString("\n")
		b.WriteString(descHead)
		b.WriteString(t.Description)
		b.WriteString(descTail)
	}
	return b.Bytes()
}

// frontmatter is the task's fields as a YAML mapping, keys in sorted
// order. Backlog.md's own fields (id, title, status, assignee, labels,
// dependencies, parent_task_id, priority, created_date, updated_date) come
// with cairn's that Backlog.md lacks (blocked_reason, progress,
// estimate_hours) and source_id, the id the task had where it was
// imported from, when it differs from its id here.
func frontmatter(t Task) []byte {
	fields := map[string]*yaml.Node{
		"id":           str(t.TaskID),
		"title":        str(t.Title),
		"status":       str(statusName(t.Status)),
		"assignee":     list(assignees(t.Assignee)),
		"labels":       list(t.Labels),
		"dependencies": list(t.DependsOn),
	}
	if t.ParentID != "" {
		fields["parent_task_id"] = str(t.ParentID)
	}
	if p, ok := priorityNames[t.Priority]; ok {
		fields["priority"] = str(p)
	} else if t.Priority != "" {
		fields["priority"] = str(t.Priority)
	}
	if t.Status == "blocked" && t.BlockedReason != "" {
		fields["blocked_reason"] = str(t.BlockedReason)
	}
	if t.Progress != 0 {
		fields["progress"] = num(t.Progress)
	}
	if t.EstimateHours != nil {
		fields["estimate_hours"] = num(*t.EstimateHours)
	}
	if t.Source != "" && t.Source != t.TaskID {
		fields["source_id"] = str(t.Source)
	}
	if t.SourceCreated != "" {
		fields["created_date"] = str(t.SourceCreated)
	}
	if t.SourceUpdated != "" {
		fields["updated_date"] = str(t.SourceUpdated)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range keys {
		m.Content = append(m.Content, str(k), fields[k])
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// A mapping of strings, lists of strings and numbers always encodes.
	_ = enc.Encode(m)
	_ = enc.Close()
	return b.Bytes()
}

// statusName is a status as the board shows it.
func statusName(s string) string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return s
}

// assignees is the task's assignee as Backlog.md's list of them; cairn's
// default, unassigned, is none.
func assignees(a string) []string {
	if a == "" || a == "unassigned" {
		return nil
	}
	return []string{a}
}

func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.ContainsAny(s, "\n\r\t") || s != strings.TrimSpace(s) {
		// Spaces at the ends and line breaks survive only quoted.
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func num(f float64) *yaml.Node {
	v := strconv.FormatFloat(f, 'f', -1, 64)
	tag := "!!float"
	if !strings.ContainsAny(v, ".eE") {
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v}
}

// list is a flow list, as Backlog.md writes its lists: labels: [a, b].
func list(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{}}
	for _, it := range items {
		n.Content = append(n.Content, str(it))
	}
	return n
}
