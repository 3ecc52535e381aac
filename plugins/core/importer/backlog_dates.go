package importer

import (
	"strings"
	"time"
)

// backlogDateLayouts are the forms of created_date and updated_date in
// Backlog.md files: its date_format ("yyyy-mm-dd", "yyyy-mm-dd hh:mm"),
// with seconds, and RFC 3339 (what cairn's export writes). A time without
// a zone is UTC, as Backlog.md writes it.
var backlogDateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02",
}

// backlogDate reads a Backlog.md date as RFC 3339 (UTC).
func backlogDate(w Where, field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		// Already RFC 3339: kept as spelled, so that an export read back
		// gives the same text.
		return s, nil
	}
	for _, layout := range backlogDateLayouts {
		if at, err := time.Parse(layout, s); err == nil {
			return at.UTC().Format(time.RFC3339Nano), nil
		}
	}
	return "", Refuse(w, field, "format", "%s %q is not a date such as 2025-06-03, 2025-06-03 14:30 or 2025-06-03T14:30:00Z", field, s)
}
