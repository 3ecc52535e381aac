package engine

import (
	"sort"
	"time"
)

// PhaseNames lists the phases the project knows, sorted, with the current
// phase first (it is what a client completing a phase most likely wants).
func (e *Engine) PhaseNames() ([]string, error) {
	var out []string
	err := e.read(func(s *state, _ time.Time) error {
		for name := range s.Project.Phases {
			if name != s.Project.CurrentPhase {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		if s.Project.CurrentPhase != "" {
			out = append([]string{s.Project.CurrentPhase}, out...)
		}
		return nil
	})
	return out, err
}
