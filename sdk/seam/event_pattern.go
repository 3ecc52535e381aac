package seam

// MatchEventType reports whether an event type matches a subscription
// pattern: exact, "<category>.*" (any type under the category, at any
// depth) or "*". The host's bus, the SDK's event handlers and the
// webhooks all match with it.
func MatchEventType(pattern, eventType string) bool {
	switch {
	case pattern == "*":
		return true
	case len(pattern) > 2 && pattern[len(pattern)-2:] == ".*":
		prefix := pattern[:len(pattern)-1]
		return len(eventType) > len(prefix) && eventType[:len(prefix)] == prefix
	default:
		return pattern == eventType
	}
}
