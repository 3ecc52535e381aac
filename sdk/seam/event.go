package seam

import "encoding/json"

// Event is a bus event as it crosses the seam: one a plugin publishes, or
// one delivered to a plugin's subscriptions.
type Event struct {
	ID, Type, Source, Time string
	Data                   json.RawMessage
}

// PublishAck tells a plugin that its streamed events up to Seq are on the
// host's bus. Error is set when the host refused the event at Seq; Retry
// when that event is on the bus but a local subscriber's handler failed
// on it, so its durable publisher publishes it again later.
type PublishAck struct {
	Seq   uint64
	Error string
	Retry bool
}
