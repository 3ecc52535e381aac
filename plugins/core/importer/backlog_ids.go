package importer

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Backlog.md ids are <prefix>-<n>, sub-tasks <prefix>-<n>.<m>: the prefix
// is its config.yml's task_prefix (letters only, "task" when unset), spelled
// in any case ("BACK-12" in the file, back-12 in its name); drafts number
// on their own as draft-<n>. Older boards and their dependencies still
// say task-<n> after the prefix changed, and bare numbers name tasks too.

// The expressions here compile on first use, not in package init, which
// every cairn process runs (docs/decisions.md D46).

// backlogIDPattern matches an id: an optional letters prefix and the
// dot-separated numbers.
var backlogIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:([a-z]+)-)?([0-9]+(?:\.[0-9]+)*)$`) })

// backlogPrefixPattern is what Backlog.md accepts as a task_prefix.
var backlogPrefixPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]+$`) })

// backlogDefaultPrefix is Backlog.md's task prefix when config.yml sets none.
const backlogDefaultPrefix = "task"

// backlogIDs keys the ids of one board, whose task prefix is prefix
// (lower case).
type backlogIDs struct{ prefix string }

// key normalizes an id to the board's key for it: the board's prefix (for
// its own prefix, task- and a bare number) or the id's own, in lower
// case, then its numbers without leading zeros ("BACK-217.02" is
// back-217.2).
func (ids backlogIDs) key(w Where, field, s string) (string, error) {
	m := backlogIDPattern().FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return "", Refuse(w, field, "pattern", "%s %q is not a task id such as %s-7 or %s-7.1", field, s, ids.prefix, ids.prefix)
	}
	prefix := m[1]
	if prefix == "" || prefix == backlogDefaultPrefix {
		prefix = ids.prefix
	}
	parts := strings.Split(m[2], ".")
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return "", Refuse(w, field, "pattern", "%s %q has a number too large for an id", field, s)
		}
		parts[i] = strconv.FormatUint(v, 10)
	}
	return prefix + "-" + strings.Join(parts, "."), nil
}

// idLess orders keys: the board's own prefix first, then the others by
// name, and within a prefix by their numbers (back-2 < back-10 <
// back-10.1).
func (ids backlogIDs) idLess(a, b string) bool {
	pa, na, _ := strings.Cut(a, "-")
	pb, nb, _ := strings.Cut(b, "-")
	if pa != pb {
		if pa == ids.prefix || pb == ids.prefix {
			return pa == ids.prefix
		}
		return pa < pb
	}
	xa, xb := strings.Split(na, "."), strings.Split(nb, ".")
	for i := 0; i < len(xa) && i < len(xb); i++ {
		x, _ := strconv.ParseUint(xa[i], 10, 64)
		y, _ := strconv.ParseUint(xb[i], 10, 64)
		if x != y {
			return x < y
		}
	}
	return len(xa) < len(xb)
}

// backlogFileName matches the name of a task or draft file: an id, then
// usually " - " and the title (Backlog.md globs <prefix>-*.md); a
// readme.md beside them is not a task.
var backlogFileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]+-[0-9][^/]*\.md$`) })
