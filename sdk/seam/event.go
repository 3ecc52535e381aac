package seam

import "encoding/json"

// Event is a bus event as it crosses the seam: one a plugin publishes, or
// one delivered to a plugin's subscriptions.
type Event struct {
	ID, Type, Source, Time string
	Data                   json.RawMessage
}
