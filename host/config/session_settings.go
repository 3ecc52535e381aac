package config

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The settings a session brings in its environment (CAIRN_MODE,
// CAIRN_TOOLSETS, CAIRN_PROJECT) never stop it: a wrong value is named in a
// warning, which the session prints on stderr and sends its client as an
// MCP log message, and the session goes on with what is valid
// (docs/decisions.md D21). Only the operator's own mistakes that make
// serving impossible stop a start.

var projectPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })

// ValidProject reports whether p is a project slug.
func ValidProject(p string) bool { return projectPattern().MatchString(p) }

// SessionMode parses a CAIRN_MODE value. An unknown mode serves READONLY,
// the safe reading of a mistyped restriction, and says so.
func SessionMode(raw string) (mode, warning string) {
	mode = strings.ToUpper(strings.TrimSpace(raw))
	switch mode {
	case "":
		return ModeFull, ""
	case ModeFull, ModeReadOnly, ModeTest, ModeMinimal:
		return mode, ""
	}
	return ModeReadOnly, fmt.Sprintf("CAIRN_MODE %q is not a mode (use FULL, READONLY, TEST or MINIMAL); this session serves READONLY until it is fixed", raw)
}

// SessionToolsets parses a CAIRN_TOOLSETS value, dropping the entries that
// are not toolset names and naming them, with the valid choices, in a
// warning. When the list held entries and none of them is valid, it serves
// the system tools only: a typo never widens what a session may call
// (docs/decisions.md D42).
func SessionToolsets(raw string) (Toolsets, string) {
	t := Toolsets{Enabled: map[string]bool{}, Excluded: map[string]bool{}}
	var bad []string
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		one, err := ParseToolsets(entry)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%q", entry))
			continue
		}
		t.All = t.All || one.All
		t.None = t.None || one.None
		for k := range one.Enabled {
			t.Enabled[k] = true
		}
		for k := range one.Excluded {
			t.Excluded[k] = true
		}
	}
	if len(bad) == 0 {
		return t, ""
	}
	msg := fmt.Sprintf("CAIRN_TOOLSETS: %s ignored: not a toolset name (valid: a comma-separated list of %s, a third-party plugin's toolset, all, none, or -name to exclude one)",
		strings.Join(bad, ", "), strings.Join(BuiltinToolsets, ", "))
	if t.Empty() {
		t = SystemOnly()
		msg += "; " + SystemOnlyNote
	}
	return t, msg
}

// SessionProject checks a CAIRN_PROJECT value; a value that is not a slug
// is ignored, so calls fall back to the project used last or the
// workspace's slug.
func SessionProject(raw string) (project, warning string) {
	raw = strings.TrimSpace(raw)
	if raw == "" || ValidProject(raw) {
		return raw, ""
	}
	return "", fmt.Sprintf("CAIRN_PROJECT %q ignored: a project is a slug matching ^[a-z0-9][a-z0-9-]{0,62}$; calls use the project this session used last, else the workspace's", raw)
}
