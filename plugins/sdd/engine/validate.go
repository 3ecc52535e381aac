package engine

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

var (
	// safeName is the pattern of every name that may become part of a file
	// name or URI: phases, command and agent ids, resource ids, intents,
	// skill and agent ids. It cannot contain a separator, so it can never
	// name a path; ".." is refused separately.
	// Compiled on first use, not in package init, which every cairn process runs.
	safeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	// keySegment is the D17 key-path segment pattern.
	keySegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) })
)

// reservedSegments are key-path segments refused because they are
// prototype-pollution vectors in the JavaScript original and in any JS
// consumer of the state file.
var reservedSegments = map[string]bool{"__proto__": true, "prototype": true, "constructor": true}

// Limits on free-text inputs, so a fuzzed or runaway call cannot bloat the
// state file.
const (
	maxKeyPathLen   = 512
	maxKeySegments  = 32
	maxContentBytes = 1 << 20
	maxTextLen      = 20000
	maxShortText    = 256
	maxListItems    = 100
)

// checkName validates a safe name in field.
func checkName(field, v string) error {
	if v == "" {
		return errs.Invalidf(field, "required", "%s is required", field)
	}
	if !safeName().MatchString(v) || strings.Contains(v, "..") {
		return errs.Invalidf(field, "pattern",
			"%s %q is not a safe name: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, without '..' or path separators",
			field, v)
	}
	return nil
}

// checkText validates a required or optional free-text field.
func checkText(field, v string, required bool, maxLen int) error {
	if required && strings.TrimSpace(v) == "" {
		return errs.Invalidf(field, "required", "%s is required and must not be blank", field)
	}
	if !utf8.ValidString(v) {
		return errs.Invalidf(field, "encoding", "%s must be valid UTF-8", field)
	}
	if utf8.RuneCountInString(v) > maxLen {
		return errs.Invalidf(field, "maxLength", "%s must be at most %d characters", field, maxLen)
	}
	return nil
}

// checkList validates a list of short strings.
func checkList(field string, items []string) error {
	if len(items) > maxListItems {
		return errs.Invalidf(field, "maxItems", "%s may hold at most %d items", field, maxListItems)
	}
	for i, it := range items {
		f := field + "[" + strconv.Itoa(i) + "]"
		if err := checkText(f, it, true, maxShortText); err != nil {
			return err
		}
	}
	return nil
}

// ParseKeyPath splits a dot-notation key path and validates every segment
// (D17): each must match ^[a-zA-Z0-9_-]+$ and must not be __proto__,
// prototype or constructor. Violations are 400 errors naming field keyPath.
func ParseKeyPath(keyPath string) ([]string, error) {
	if keyPath == "" {
		return nil, errs.Invalid("keyPath", "required", "keyPath is required (dot-separated segments such as project.owner)")
	}
	if len(keyPath) > maxKeyPathLen {
		return nil, errs.Invalidf("keyPath", "maxLength", "keyPath must be at most %d characters", maxKeyPathLen)
	}
	segs := strings.Split(keyPath, ".")
	if len(segs) > maxKeySegments {
		return nil, errs.Invalidf("keyPath", "maxSegments", "keyPath may have at most %d segments", maxKeySegments)
	}
	for i, s := range segs {
		if !keySegment().MatchString(s) {
			return nil, errs.Invalidf("keyPath", "pattern",
				"keyPath segment %d (%q) must match ^[a-zA-Z0-9_-]+$ (letters, digits, '_' or '-'; no empty segments)", i+1, s).
				With("segment", i+1)
		}
		if reservedSegments[s] {
			return nil, errs.Invalidf("keyPath", "reserved",
				"keyPath segment %q is reserved (__proto__, prototype and constructor are refused)", s).With("segment", i+1)
		}
	}
	return segs, nil
}
