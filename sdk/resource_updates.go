package sdk

import "context"

// EventResourceUpdated is the bus event a plugin publishes when one of its
// resources changed; the host turns it into notifications/resources/updated
// for the sessions subscribed to that URI (resources/subscribe, or
// subscriptions/listen in protocol 2026-07-28).
const EventResourceUpdated = "resource.updated"

// EventPromptsChanged is the bus event a plugin publishes when its prompt
// list changed; the host asks it again and tells clients.
const EventPromptsChanged = "prompts.changed"

// ResourceUpdated tells the host that the resource at uri changed.
func (p *Plugin) ResourceUpdated(ctx context.Context, uri string) error {
	return p.Publish(ctx, EventResourceUpdated, map[string]string{"uri": uri})
}

// PromptsChanged tells the host that the plugin's prompt list changed.
func (p *Plugin) PromptsChanged(ctx context.Context) error {
	return p.Publish(ctx, EventPromptsChanged, map[string]string{})
}
