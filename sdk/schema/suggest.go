package schema

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// closestProperty picks the known property an unknown argument most
// likely meant, or "" when none is close: the same name in another case
// or spelling of separators ("key_path" for "keyPath"), then the fewest
// edits (a swap of neighbours counts as one; at most a third of the
// name's length, so short names need an exact match), then a name that
// begins or ends with the unknown one ("key" for "keyPath", at least
// three characters). Ties go to the first name in order, so the answer is
// the same on every run.
func closestProperty(unknown string, known []string) string {
	names := append([]string(nil), known...)
	sort.Strings(names)
	u := foldName(unknown)
	maxEdits := min(utf8.RuneCountInString(u)/3, 3)
	best, bestScore := "", -1
	consider := func(name string, score int) {
		if bestScore < 0 || score < bestScore {
			best, bestScore = name, score
		}
	}
	for _, name := range names {
		k := foldName(name)
		switch {
		case name == unknown:
			continue
		case k == u:
			consider(name, 0)
		case editDistance(u, k) <= maxEdits:
			consider(name, 1+editDistance(u, k))
		case utf8.RuneCountInString(u) >= 3 && (strings.HasPrefix(k, u) || strings.HasSuffix(k, u)):
			consider(name, 10+utf8.RuneCountInString(k)-utf8.RuneCountInString(u))
		}
	}
	return best
}

// foldName lowers a name and drops the separators people spell
// differently, so keyPath, key_path and Key-Path compare equal.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of neighbouring characters that turn a into b (optimal string
// alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// unknownArgument is the refusal of an argument the schema does not
// know, naming the closest known one when there is one.
func unknownArgument(parent, name string, known []string) *errs.Error {
	field := joinField(parent, name)
	guess := closestProperty(name, known)
	if guess == "" {
		return errs.Invalidf(field, "additionalProperties", "%s is not a known argument; remove it or check its spelling", displayField(field))
	}
	want := joinField(parent, guess)
	return errs.Invalidf(field, "additionalProperties", "%s is not a known argument; did you mean %s?", displayField(field), want).With("suggestion", want)
}
