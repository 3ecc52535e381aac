package toolcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// writeJSON prints the tool's output as JSON, as the rest of the CLI does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// render prints the output readably through the spec's renderer or the
// generic one, then the invocation's notes.
func render(w io.Writer, r func(w io.Writer, out, in map[string]any), out map[string]any, inv *Invocation) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if r == nil {
		r = Generic
	}
	r(tw, out, inv.In)
	for _, n := range inv.Notes {
		fmt.Fprintf(tw, "\n%s\n", n)
	}
	return tw.Flush()
}

// Generic renders any output object: a "name<TAB>value" line per field in
// name order, and a list of objects as a table of its fields.
func Generic(w io.Writer, out, _ map[string]any) {
	var lists []string
	for _, k := range sortedKeys(out) {
		if rows, ok := objects(out[k]); ok && len(rows) > 0 {
			lists = append(lists, k)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\n", k, Text(out[k]))
	}
	for _, k := range lists {
		rows, _ := objects(out[k])
		fmt.Fprintf(w, "\n%s:\n", k)
		cols := map[string]bool{}
		for _, r := range rows {
			for c := range r {
				cols[c] = true
			}
		}
		names := sortedKeys(cols)
		fmt.Fprintln(w, strings.ToUpper(strings.Join(names, "\t")))
		for _, r := range rows {
			cells := make([]string, len(names))
			for i, c := range names {
				cells[i] = Text(r[c])
			}
			fmt.Fprintln(w, strings.Join(cells, "\t"))
		}
	}
}

// Text shows one value in a table cell: "-" for absent or null, lists
// comma-joined, objects as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}

// objects reads v as a list of objects.
func objects(v any) ([]map[string]any, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
