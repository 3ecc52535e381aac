package engine

import (
	"fmt"
	"sort"
	"strings"
)

// gateDashDecisions is how many recent gate decisions the text dashboard
// shows.
const gateDashDecisions = 10

// gatesSection is the text dashboard's phase gates section: the mode, the
// moves waiting for a person and the last decisions (who, when, what);
// empty while no person ever set a mode.
func gatesSection(s *state) string {
	g := s.Gates
	if g == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Phase gates\n\n- Phase gates: %s", s.gateMode())
	if g.ChangedBy != "" {
		fmt.Fprintf(&b, " (set by %s at %s)", mdCell(g.ChangedBy), g.ChangedAt)
	}
	b.WriteString("\n")
	var waiting []gateRequest
	for _, r := range g.Requests {
		if r.State == gatePending {
			waiting = append(waiting, r)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].RequestedAt > waiting[j].RequestedAt })
	for _, r := range waiting {
		fmt.Fprintf(&b, "- Waiting for a person: %s → %s, asked by %s at %s\n", phaseLabel(r.From), r.To, mdCell(r.RequestedBy), r.RequestedAt)
	}
	for i := len(g.History) - 1; i >= 0 && i >= len(g.History)-gateDashDecisions; i-- {
		h := g.History[i]
		fmt.Fprintf(&b, "- Decided: %s %s → %s by %s via %s at %s", h.Decision, phaseLabel(h.PhaseFrom), h.PhaseTo, mdCell(h.By), h.Via, h.At)
		if h.Reason != "" {
			fmt.Fprintf(&b, ": %s", mdCell(h.Reason))
		}
		b.WriteString("\n")
	}
	return b.String()
}
