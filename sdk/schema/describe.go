package schema

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// printer states rules with English number formatting ("1,000").
var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// describe turns a failure tree into the error reported: the most
// specific violation, the deepest in the document and then in the tree,
// the first of equals in checking order (members by name), so the message
// is the same on every run.
func describe(f *failure) *errs.Error {
	leaf := deepest(f)
	field := pointerToField(leaf.loc)
	constraint := leaf.kind.keyword()
	if constraint == "" {
		constraint = "schema"
	}
	switch k := leaf.kind.(type) {
	case requiredFailed:
		missing := append([]string(nil), k.missing...)
		sort.Strings(missing)
		field = joinField(field, missing[0])
		return errs.Invalidf(field, "required", "%s is required", displayField(field))
	case additionalFailed:
		props := append([]string(nil), k.props...)
		sort.Strings(props)
		return unknownArgument(field, props[0], k.known)
	}
	rule := leaf.kind.rule(printer())
	return errs.Invalid(field, constraint, advice(displayField(field), leaf.kind, rule)).With("rule", rule)
}

// advice phrases a violation as something to fix.
func advice(f string, k violation, rule string) string {
	rat := func(r *big.Rat) string { return strings.TrimSuffix(strings.TrimRight(r.FloatString(6), "0"), ".") }
	switch k := k.(type) {
	case countFailed:
		switch k.kw {
		case "minLength":
			return fmt.Sprintf("%s must be at least %d characters long (got %d)", f, k.want, k.got)
		case "maxLength":
			return fmt.Sprintf("%s must be at most %d characters long (got %d)", f, k.want, k.got)
		case "minItems":
			return fmt.Sprintf("%s must have at least %d items (got %d)", f, k.want, k.got)
		case "maxItems":
			return fmt.Sprintf("%s must have at most %d items (got %d)", f, k.want, k.got)
		}
	case boundFailed:
		switch k.kw {
		case "minimum":
			return fmt.Sprintf("%s must be at least %s (got %s)", f, rat(k.want), rat(k.got))
		case "maximum":
			return fmt.Sprintf("%s must be at most %s (got %s)", f, rat(k.want), rat(k.got))
		case "exclusiveMinimum":
			return fmt.Sprintf("%s must be greater than %s (got %s)", f, rat(k.want), rat(k.got))
		case "exclusiveMaximum":
			return fmt.Sprintf("%s must be less than %s (got %s)", f, rat(k.want), rat(k.got))
		}
	case enumFailed:
		vals := make([]string, len(k.want))
		for i, v := range k.want {
			vals[i] = fmt.Sprint(v)
		}
		return fmt.Sprintf("%s must be one of %s (got %v)", f, strings.Join(vals, ", "), k.got)
	case typeMismatch:
		return fmt.Sprintf("%s must be of type %s (got %s)", f, strings.Join(k.want, " or "), k.got)
	case patternFailed:
		return fmt.Sprintf("%s must match the pattern %s (got %q)", f, k.want, k.got)
	case uniqueFailed:
		return fmt.Sprintf("%s must not repeat items (items %d and %d are equal)", f, k.first, k.again)
	}
	return f + ": " + rule
}

// deepest picks the leaf deepest in the document, then in the tree; the
// first of equals.
func deepest(f *failure) *failure {
	best, bestDepth := f, -1
	var walk func(e *failure, depth int)
	walk = func(e *failure, depth int) {
		if len(e.causes) == 0 {
			if d := len(e.loc)*100 + depth; d > bestDepth {
				best, bestDepth = e, d
			}
			return
		}
		for _, c := range e.causes {
			walk(c, depth+1)
		}
	}
	walk(f, 0)
	return best
}

// pointerToField renders ["labels","3"] as labels[3] and ["a","b"] as a.b.
func pointerToField(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func joinField(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func displayField(f string) string {
	if f == "" {
		return "the arguments object"
	}
	return f
}
