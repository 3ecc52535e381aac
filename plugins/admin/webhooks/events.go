package webhooks

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// TestEventType is the event type of testWebhook's ping.
const TestEventType = "webhook.test"

// specEventTypes are the specification's webhook event types (part 6),
// whose categories are closed: only these types exist in them.
var specEventTypes = map[string][]string{
	"message":   {"message.created", "message.completed", "message.failed"},
	"batch":     {"batch.created", "batch.completed", "batch.failed"},
	"usage":     {"usage.threshold_exceeded", "usage.daily_reset"},
	"api_key":   {"api_key.created", "api_key.rotated", "api_key.revoked"},
	"workspace": {"workspace.created", "workspace.updated", "workspace.deleted"},
	"member":    {"member.added", "member.removed", "member.role_changed"},
	"webhook":   {TestEventType},
}

// busCategories are the host bus's categories (D19): other areas publish
// into them and may add types, so any well-formed type in them is valid.
// The listed types are the ones cairn publishes today.
var busCategories = map[string][]string{
	"task":     {"task.created", "task.updated"},
	"thought":  {"thought.recorded"},
	"audit":    {"audit.started", "audit.finalized"},
	"sdd":      {"sdd.lease.issued", "sdd.lease.returned", "sdd.spawn.queued", "sdd.spawn.completed", "sdd.state.recovered"},
	"project":  {"project.created", "project.updated", "project.archived", "project.unarchived", "project.deleted"},
	"vision":   nil,
	"computer": nil,
}

var typePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+){1,3}$`) })

// IsValidEventType reports whether eventType is an event type webhooks can
// receive: one of the specification's types, or a well-formed type in one
// of the host bus's categories (task, thought, audit, sdd, project, vision,
// computer).
func IsValidEventType(eventType string) bool {
	if !typePattern().MatchString(eventType) {
		return false
	}
	cat, _, _ := strings.Cut(eventType, ".")
	if types, ok := specEventTypes[cat]; ok {
		for _, t := range types {
			if t == eventType {
				return true
			}
		}
		return false
	}
	_, ok := busCategories[cat]
	return ok
}

// IsValidPattern reports whether p may appear in a webhook's event types:
// "*", "<category>.*" for a known category, or a valid event type.
func IsValidPattern(p string) bool {
	if p == "*" {
		return true
	}
	if cat, ok := strings.CutSuffix(p, ".*"); ok {
		if _, spec := specEventTypes[cat]; spec {
			return true
		}
		_, bus := busCategories[cat]
		return bus
	}
	return IsValidEventType(p)
}

// EventTypes lists every known event type, sorted.
func EventTypes() []string {
	var out []string
	for _, m := range []map[string][]string{specEventTypes, busCategories} {
		for _, ts := range m {
			out = append(out, ts...)
		}
	}
	sort.Strings(out)
	return out
}

// Categories lists every category, sorted.
func Categories() []string {
	var out []string
	for _, m := range []map[string][]string{specEventTypes, busCategories} {
		for c := range m {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
