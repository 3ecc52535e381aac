package webhooks

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// Keyed is the manager serving one keyed call (docs/decisions.md D32):
// each write looks the call up in its transaction and, when it was
// recorded, writes and sends nothing and returns zero values (the recorded
// outcome is c.Replayed()); otherwise it records its return value with
// the write. Each method is the Manager method of the same name.
type Keyed struct {
	m *Manager
	c *store.Call
}

// Keyed binds the manager to c; a nil c is a call without a key.
func (m *Manager) Keyed(c *store.Call) Keyed { return Keyed{m: m, c: c} }

func (k Keyed) Register(ctx context.Context, o RegisterOptions) (*RegisterResult, error) {
	return k.m.register(ctx, o, k.c)
}

func (k Keyed) UpdateWebhook(ctx context.Context, id string, u Updates) (*Webhook, error) {
	return k.m.updateWebhook(ctx, id, u, k.c)
}

func (k Keyed) Pause(id string) (bool, error) { return k.m.setStatus(id, StatusPaused, k.c) }

func (k Keyed) Resume(id string) (bool, error) { return k.m.setStatus(id, StatusActive, k.c) }

func (k Keyed) Unregister(id string) (bool, error) { return k.m.unregister(id, k.c) }

func (k Keyed) RotateSecret(id, newSecret string) (string, error) {
	return k.m.rotateSecret(id, newSecret, k.c)
}

func (k Keyed) TestWebhook(ctx context.Context, id string) (*TestResult, error) {
	return k.m.testWebhook(ctx, id, k.c)
}

func (k Keyed) TriggerEventFor(ctx context.Context, workspaceID, eventType string, payload any) (*TriggerResult, error) {
	return k.m.triggerEventFor(ctx, workspaceID, eventType, payload, k.c)
}
