package ui

import (
	"fmt"
	"html"
	"html/template"
	"strings"
)

// svg draws the layout as an inline SVG element: every text escaped, no
// script and no style attribute (the dashboard's Content-Security-Policy
// allows neither); colours come from the stylesheet's classes, the status
// colours of the board. Each task is a link to its page; the drawing is a
// group, not an image, so those links stay reachable by keyboard and
// screen reader.
func (lay graphLayout) svg(project string) template.HTML {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="graph" data-graph viewBox="0 0 %d %d" width="%d" height="%d" role="group" aria-labelledby="graph-title">`,
		lay.Width, lay.Height, lay.Width, lay.Height)
	fmt.Fprintf(&b, `<title id="graph-title">Dependencies of project %s: %d tasks, %d edges</title>`, esc(project), len(lay.Nodes), len(lay.Edges))
	b.WriteString(`<defs><marker id="g-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path class="g-arrowhead" d="M0 0 L8 4 L0 8 z"/></marker>` +
		`<marker id="g-arrow-path" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="5" markerHeight="5" orient="auto"><path class="g-arrowhead on-path" d="M0 0 L8 4 L0 8 z"/></marker></defs>`)
	b.WriteString(`<g class="g-edges">`)
	for _, e := range lay.Edges {
		cls, marker := "g-edge", "g-arrow"
		if e.OnPath {
			cls, marker = "g-edge on-path", "g-arrow-path"
		}
		fmt.Fprintf(&b, `<path class="%s" d="%s" marker-end="url(#%s)" data-from="%s" data-to="%s"/>`, cls, esc(e.D), marker, esc(e.From), esc(e.To))
	}
	b.WriteString(`</g><g class="g-nodes">`)
	for _, n := range lay.Nodes {
		cls := "g-node status-" + esc(n.Status)
		if n.OnPath {
			cls += " on-path"
		}
		fmt.Fprintf(&b, `<a href="/task/%s" class="%s" data-task="%s" data-layer="%d">`, esc(n.ID), cls, esc(n.ID), n.Layer)
		fmt.Fprintf(&b, `<title>%s %s · %s</title>`, esc(n.ID), esc(n.Title), esc(words(n.Status)))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="4"/>`, n.X, n.Y, n.W, n.H)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text></a>`, n.X+graphLabelPad, n.Y+n.H/2+4, esc(n.Label))
	}
	b.WriteString(`</g></svg>`)
	return template.HTML(b.String())
}
