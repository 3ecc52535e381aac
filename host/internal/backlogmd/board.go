package backlogmd

import (
	"bytes"
	"fmt"
	"strings"
)

// Board is the files of an export: path in the folder (slash-separated)
// to bytes.
type Board map[string][]byte

// Build is the board of a project's tasks: config.yml, one file per task
// and one per decision, from the records of type decision of the task
// that holds them (IsDecisions), which has no file of its own.
func Build(project string, tasks []Task, decisions []Record) Board {
	b := Board{ConfigFile: Config(project)}
	for _, t := range tasks {
		if !IsDecisions(t) {
			b[Path(t)] = File(t)
		}
	}
	for name, data := range Decisions(decisions) {
		b[name] = data
	}
	return b
}

// Config is the board's config.yml: its name, the statuses of cairn's
// lifecycle as its columns, and the task prefix that gives cairn's ids.
func Config(project string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project_name: %s\n", quoted(project))
	fmt.Fprintf(&b, "default_status: %s\n", quoted("Backlog"))
	qs := make([]string, len(Statuses))
	for i, s := range Statuses {
		qs[i] = quoted(s)
	}
	fmt.Fprintf(&b, "statuses: [%s]\n", strings.Join(qs, ", "))
	fmt.Fprintf(&b, "task_prefix: %s\n", quoted(Prefix))
	return b.Bytes()
}

// quoted is s as a double-quoted YAML scalar (project slugs and the
// fixed names above hold no character that needs escaping but these).
func quoted(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
