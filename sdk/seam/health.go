package seam

import "encoding/json"

// HealthOpening is the Health status of a plugin that is configured and
// described but still opening (completing an import, building an index):
// the host lists its tools and holds its calls, events and resource reads
// until its Health says anything else. A plugin whose opening fails exits,
// and the host restarts it as after a crash.
const HealthOpening = "opening"

// Health is a plugin's own view of its health.
type Health struct {
	// Status is "ok", "degraded" or HealthOpening.
	Status, Message string
	// Details is a JSON object of plugin-specific details (empty: none).
	Details json.RawMessage
}
