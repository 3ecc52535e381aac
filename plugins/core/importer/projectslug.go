package importer

import "strings"

// maxProjectSlug is the longest project slug cairn takes
// (^[a-z0-9][a-z0-9-]{0,62}$).
const maxProjectSlug = 63

// ProjectSlug makes name (a task-master tag) a valid project slug:
// lowercase, each run of other characters than letters and digits one
// hyphen, none at either end, at most 63 characters; "tag" when nothing is
// left. "Feature_X" is feature-x.
func ProjectSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxProjectSlug {
		s = strings.TrimRight(s[:maxProjectSlug], "-")
	}
	if s == "" {
		return "tag"
	}
	return s
}
