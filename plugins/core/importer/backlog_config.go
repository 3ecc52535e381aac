package importer

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"gopkg.in/yaml.v3"
)

// readBacklogConfig reads the task prefix of the board's config.yml
// (task_prefix, as Backlog.md writes it, or taskPrefix, or prefixes.task);
// Backlog.md's own "task" when the file or the key is absent. The prefix is
// letters only, as Backlog.md requires; anything else is refused naming
// the file and the field.
func readBacklogConfig(root *os.Root, shown string) (backlogIDs, error) {
	ids := backlogIDs{prefix: backlogDefaultPrefix}
	name := "config.yml"
	if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return ids, nil
	}
	file := path.Join(shown, name)
	data, err := readBacklogFile(root, name, file)
	if err != nil {
		return ids, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return ids, Refuse(Where{File: file}, "", "format", "config.yml is not YAML: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return ids, nil
	}
	v := configValue(doc.Content[0], "task_prefix")
	if v == nil {
		v = configValue(doc.Content[0], "taskPrefix")
	}
	if p := configValue(doc.Content[0], "prefixes"); v == nil && p != nil && p.Kind == yaml.MappingNode {
		v = configValue(p, "task")
	}
	if v == nil {
		return ids, nil
	}
	w := Where{File: file, Line: v.Line}
	s, err := scalar(w, "task_prefix", v)
	if err != nil {
		return ids, err
	}
	if !backlogPrefixPattern().MatchString(s) {
		return ids, Refuse(w, "task_prefix", "pattern", "task_prefix %q must be letters only, as Backlog.md requires (task, back, T)", s)
	}
	ids.prefix = strings.ToLower(s)
	return ids, nil
}

// configValue is the value of key in the mapping m, nil when absent.
func configValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
