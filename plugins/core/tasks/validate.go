package tasks

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ProjectSlugPattern is the rule for project slugs (D7).
const ProjectSlugPattern = `^[a-z0-9][a-z0-9-]{0,62}$`

// Compiled on first use, not in package init, which every cairn process runs.
var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(ProjectSlugPattern) })

// ValidProjectSlug reports whether slug matches ProjectSlugPattern.
func ValidProjectSlug(slug string) bool { return slugRE().MatchString(slug) }

func checkSlug(field, slug string) error {
	if slug == "" {
		return errs.Invalidf(field, "required", "%s is required: a project slug such as \"my-app\"", field)
	}
	if !ValidProjectSlug(slug) {
		return errs.Invalidf(field, "pattern", "%s %q is not a project slug: use 1 to 63 lowercase letters, digits and hyphens, starting with a letter or digit (%s)", field, clip(slug), ProjectSlugPattern)
	}
	return nil
}

// checkText enforces UTF-8 and a length range counted in Unicode code
// points, the unit the specification's "chars" means for agents writing in
// any script.
func checkText(field, s string, minLen, maxLen int) error {
	if !utf8.ValidString(s) {
		return errs.Invalidf(field, "utf8", "%s is not valid UTF-8; send text as UTF-8", field)
	}
	n := utf8.RuneCountInString(s)
	if n < minLen {
		if minLen == 1 {
			return errs.Invalidf(field, "minLength", "%s must not be empty", field)
		}
		return errs.Invalidf(field, "minLength", "%s must have at least %d characters, got %d", field, minLen, n)
	}
	if maxLen >= 0 && n > maxLen {
		return errs.Invalidf(field, "maxLength", "%s must have at most %d characters, got %d; shorten it", field, maxLen, n)
	}
	return nil
}

func checkUTF8(field, s string) error { return checkText(field, s, 0, -1) }

func checkTitle(title string) error {
	if err := checkText("title", title, 1, MaxTitleLen); err != nil {
		return err
	}
	if strings.TrimSpace(title) == "" {
		return errs.Invalid("title", "minLength", "title must not be blank; say what the task is")
	}
	return nil
}

func checkDescription(d string) error { return checkText("description", d, 0, MaxDescriptionLen) }

func checkPriority(field, p string) error {
	if priorityCode(p) == 0 {
		return errs.Invalidf(field, "enum", "%s %q is not a priority; use one of %s", field, clip(p), strings.Join(Priorities, ", ")).With("allowed", Priorities)
	}
	return nil
}

func checkStatus(field, s string) error {
	if statusCode(s) == 0 {
		return errs.Invalidf(field, "enum", "%s %q is not a status; use one of %s", field, clip(s), strings.Join(Statuses, ", ")).With("allowed", Statuses)
	}
	return nil
}

func checkLabels(labels []string) error {
	if len(labels) > MaxLabels {
		return errs.Invalidf("labels", "maxItems", "a task has at most %d labels, got %d; drop some", MaxLabels, len(labels))
	}
	for i, l := range labels {
		if err := checkUTF8(fmt.Sprintf("labels[%d]", i), l); err != nil {
			return err
		}
	}
	return nil
}

func checkRange(field string, v, lo, hi float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return errs.Invalidf(field, "type", "%s must be a finite number", field)
	}
	if v < lo {
		return errs.Invalidf(field, "minimum", "%s must be at least %g, got %g", field, lo, v)
	}
	if v > hi {
		return errs.Invalidf(field, "maximum", "%s must be at most %g, got %g", field, hi, v)
	}
	return nil
}

func checkTaskID(field, id string) (uint64, error) {
	if id == "" {
		return 0, errs.Invalidf(field, "required", "%s is required: a task id such as \"T-12\"", field)
	}
	n, ok := ParseTaskID(id)
	if !ok {
		return 0, errs.Invalidf(field, "pattern", "%s %q is not a task id; task ids look like \"T-12\"", field, clip(id))
	}
	return n, nil
}

// parseISOTime accepts the ISO-8601 forms an agent is likely to send: full
// RFC 3339 (any fraction, any offset), a local-less date-time taken as UTC,
// or a bare date (midnight UTC).
func parseISOTime(field, s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errs.Invalidf(field, "format", "%s %q is not an ISO-8601 time; use a form such as 2026-01-31T12:00:00.000Z", field, clip(s))
}

// clip shortens echoed input so a hostile value cannot bloat the error.
func clip(s string) string {
	const maxEcho = 80
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if utf8.RuneCountInString(s) <= maxEcho {
		return s
	}
	r := []rune(s)
	return string(r[:maxEcho]) + "…"
}
