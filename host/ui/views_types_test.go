package ui

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
)

// The dashboard decodes the areas' tool outputs into its own view types.
// Here (a test, which may import the areas) every field of each view is
// filled from the area's own output type: a field the area renames or
// drops shows up as a zero field instead of an empty column on a page.
func TestViewTypesReadEveryFieldOfTheAreasOutputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		area any
		view any
	}{
		{"audit_session_list", audit.SessionListOutput{TotalCount: 1, Sessions: []audit.SessionSummary{{
			SessionID: "A-1", TaskID: "T-1", AuditorID: "rev", Reason: "why", Scope: "shallow", StartedAt: "t0", FinalizedAt: "t1",
		}}}, &sessionList{}},
		{"sdd_dash", engine.Dashboard{
			Stats: engine.Stats{CurrentPhase: "p1", ActiveLeases: 1, TotalLeases: 2, ActiveSpawnItems: 3, TotalSpawnItems: 4,
				SkillsRegistered: 5, Status: "ok", LastWriteAt: "t", Problems: []string{"x"}},
			Phases: []engine.PhaseRecord{{Phase: "p1", PlanFile: "f", PlannedAt: "t"}},
			Leases: []engine.Lease{{LeaseID: "L-1", TaskID: "T-1", Scope: []string{"a"}, IssuedAt: "t0", ExpiresAt: "t1"}},
		}, &sddDashboard{}},
		{"sdd_agent queue", engine.SpawnQueueItem{SpawnID: "S-1", FlowID: "F", Intent: "i", Agent: "a", Order: 1, Stage: "s",
			Mode: "m", Status: "pending", Note: "n", CreatedAt: "t"}, &spawnQueueItem{}},
		{"sdd_agent history", engine.SpawnHistoryEvent{Kind: "k", Intent: "i", FlowID: "F", Details: map[string]any{"a": 1}, At: "t"}, &spawnHistoryEvent{}},
		{"sdd_skill list", engine.SkillMatrix{
			Registry: []engine.Skill{{SkillID: "s", Title: "T", Description: "D"}},
			Agents:   []engine.AgentSkillsDetail{{AgentID: "a", SkillIDs: []string{"s"}}},
		}, &skillMatrix{}},
	} {
		raw, err := json.Marshal(tc.area)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, tc.view); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, path := range zeroFields(reflect.ValueOf(tc.view).Elem(), tc.name) {
			t.Errorf("%s is empty after decoding %s", path, raw)
		}
	}
}

// zeroFields lists the paths of the zero leaf fields of v, looking into
// structs and the first element of slices.
func zeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		return zeroFields(v.Index(0), path+"[0]")
	default:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
}
