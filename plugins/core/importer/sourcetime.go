package importer

import "time"

// sourceTime is a source's time as RFC 3339 in UTC, for Task's
// SourceCreated and SourceUpdated; empty when s is not a time this reads
// (RFC 3339 with any fraction, a date-time without offset taken as UTC, a
// bare date). A time the source garbled is not worth refusing its task.
func sourceTime(s string) string {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	}
	return ""
}
