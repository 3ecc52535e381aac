package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/plugins/admin/webhooks"
	"github.com/cairn-mcp/cairn/sdk"
)

// WebhookIDInput names one webhook.
type WebhookIDInput struct {
	WebhookID string `json:"webhook_id" jsonschema:"minLength=1,maxLength=64,description=Webhook id (wh_…)"`
}

// WebhookRegisterInput is admin_webhook_register's input.
type WebhookRegisterInput struct {
	URL         string                  `json:"url" jsonschema:"minLength=1,maxLength=2048,description=http(s) endpoint; private and loopback hosts need CAIRN_ENV=development"`
	Description string                  `json:"description,omitempty" jsonschema:"maxLength=1000"`
	EventTypes  []string                `json:"event_types,omitempty" jsonschema:"maxItems=100,description=Event types or patterns (* or category.*); empty means every event"`
	Secret      string                  `json:"secret,omitempty" jsonschema:"minLength=16,maxLength=256,description=Signing secret (default: generated)"`
	Config      *webhooks.ConfigOptions `json:"config,omitempty" jsonschema:"description=maxRetries (0-10; default 5) / timeout ms (100-60000; default 10000) / rateLimitPerSecond / rateLimitPerMinute"`
	Metadata    map[string]any          `json:"metadata,omitempty"`
	WorkspaceID string                  `json:"workspace_id,omitempty" jsonschema:"maxLength=64,description=Receive only this workspace's events (you need its admin role). Omitted: every event; only the local operator registers such a webhook."`
}

// WebhookListInput is admin_webhook_list's input.
type WebhookListInput struct {
	Status    string `json:"status,omitempty" jsonschema:"enum=active,enum=paused,enum=disabled,enum=error"`
	EventType string `json:"event_type,omitempty" jsonschema:"maxLength=128,description=Only webhooks subscribed to this type"`
	Limit     int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset    int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// WebhookList is admin_webhook_list's output.
type WebhookList struct {
	Webhooks []*webhooks.Webhook `json:"webhooks"`
	Count    int                 `json:"count"`
}

// WebhookUpdateInput is admin_webhook_update's input.
type WebhookUpdateInput struct {
	WebhookID   string                  `json:"webhook_id" jsonschema:"minLength=1,maxLength=64"`
	URL         *string                 `json:"url,omitempty" jsonschema:"minLength=1,maxLength=2048"`
	Description *string                 `json:"description,omitempty" jsonschema:"maxLength=1000"`
	EventTypes  []string                `json:"event_types,omitempty" jsonschema:"maxItems=100"`
	Config      *webhooks.ConfigOptions `json:"config,omitempty"`
	Metadata    map[string]any          `json:"metadata,omitempty"`
	Status      *string                 `json:"status,omitempty" jsonschema:"enum=active,enum=paused,enum=disabled,enum=error"`
}

// Success is the output of pause, resume and unregister.
type Success struct {
	Success bool `json:"success"`
}

// RotateSecretInput is admin_webhook_rotate_secret's input.
type RotateSecretInput struct {
	WebhookID string `json:"webhook_id" jsonschema:"minLength=1,maxLength=64"`
	Secret    string `json:"secret,omitempty" jsonschema:"minLength=16,maxLength=256,description=New secret (default: generated)"`
}

// RotatedSecret is admin_webhook_rotate_secret's output.
type RotatedSecret struct {
	WebhookID string `json:"webhook_id"`
	Secret    string `json:"secret,omitempty"`
	// SecretNotice replaces Secret in a repeat of a keyed call made after
	// the secret was dropped.
	SecretNotice string `json:"secret_notice,omitempty"`
}

// DeliveriesInput is admin_webhook_deliveries' input.
type DeliveriesInput struct {
	WebhookID string `json:"webhook_id" jsonschema:"minLength=1,maxLength=64"`
	Status    string `json:"status,omitempty" jsonschema:"enum=pending,enum=held,enum=delivered,enum=failed,enum=cancelled,enum=expired"`
	Limit     int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset    int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// DeliveryList is admin_webhook_deliveries' output.
type DeliveryList struct {
	Deliveries []webhooks.Delivery `json:"deliveries"`
	Count      int                 `json:"count"`
}

// NoInput is the input of tools without arguments.
type NoInput struct{}

// WebhookStats is admin_webhook_stats' output.
type WebhookStats struct {
	Webhooks   *webhooks.ManagerStats  `json:"webhooks"`
	Deliveries *webhooks.DeliveryStats `json:"deliveries"`
}

// TriggerInput is admin_event_trigger's input.
type TriggerInput struct {
	EventType   string         `json:"event_type" jsonschema:"minLength=3,maxLength=128,description=A valid event type (see admin_event_types)"`
	Payload     map[string]any `json:"payload,omitempty" jsonschema:"description=The event's data object"`
	WorkspaceID string         `json:"workspace_id,omitempty" jsonschema:"maxLength=64,description=Fire only at this workspace's webhooks (you need its admin role). Omitted: every subscribed webhook; only the local operator may."`
}

// EventTypes is admin_event_types' output.
type EventTypes struct {
	EventTypes []string `json:"event_types"`
	Categories []string `json:"categories"`
}

// webhookTools registers the webhook tools and the event tools that feed
// webhooks.
func (a *Area) webhookTools() {
	sdk.AddTools(a.p,
		a.webhookRegister(),
		a.webhookGet(),
		a.webhookList(),
		a.webhookUpdate(),
		a.webhookPause(),
		a.webhookResume(),
		a.webhookUnregister(),
		a.webhookRotateSecret(),
		a.webhookTest(),
		a.webhookDeliveries(),
		a.webhookStats(),
		a.eventTrigger(),
		a.eventTypes(),
	)
}

// webhookRegister declares admin_webhook_register.
func (a *Area) webhookRegister() sdk.Tool[WebhookRegisterInput, *webhooks.RegisterResult] {
	return sdk.Tool[WebhookRegisterInput, *webhooks.RegisterResult]{
		Name: "admin_webhook_register", Title: "Register webhook", SuccessStatus: 201, OpenWorld: true, HonoursIdempotency: true,
		Description: "Register an http(s) endpoint for signed event deliveries; returns the signing secret once.",
		Handler: keyed(a, "admin_webhook_register", secrets[WebhookRegisterInput](webhookNotice, "webhook.secret"), func(ctx context.Context, in WebhookRegisterInput, c *store.Call) (*webhooks.RegisterResult, error) {
			l, m, err := a.parts()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if in.WorkspaceID == "" {
				if err := requireOperator(by, "workspace_id", "a webhook without workspace_id (it receives every workspace's events)"); err != nil {
					return nil, err
				}
			} else if _, err := l.RoleOf(in.WorkspaceID, by.ID); err != nil {
				return nil, err // unknown workspace
			} else if err := l.RequireRole(in.WorkspaceID, by, accounts.RoleAdmin); err != nil {
				return nil, err
			}
			return m.Keyed(c).Register(ctx, webhooks.RegisterOptions{URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, Secret: in.Secret, Config: in.Config, Metadata: in.Metadata, WorkspaceID: in.WorkspaceID, CreatedBy: by.ID})
		}),
	}
}

// webhookGet declares admin_webhook_get.
func (a *Area) webhookGet() sdk.Tool[WebhookIDInput, *webhooks.Webhook] {
	return sdk.Tool[WebhookIDInput, *webhooks.Webhook]{
		Name: "admin_webhook_get", Title: "Get webhook", ReadOnly: true, Idempotent: true,
		Description: "Show a webhook's settings, status and delivery stats (never its secret).",
		Handler: func(ctx context.Context, in WebhookIDInput) (*webhooks.Webhook, error) {
			m, err := a.webhook(ctx, in.WebhookID, canSeeWebhook)
			if err != nil {
				return nil, err
			}
			w, err := m.GetWebhook(in.WebhookID)
			if err == nil && w == nil {
				err = notFound("webhook_id", "webhook", in.WebhookID)
			}
			return w, err
		},
	}
}

// webhookList declares admin_webhook_list.
func (a *Area) webhookList() sdk.Tool[WebhookListInput, WebhookList] {
	return sdk.Tool[WebhookListInput, WebhookList]{
		Name: "admin_webhook_list", Title: "List webhooks", ReadOnly: true, Idempotent: true,
		Description: "List the webhooks of your workspaces, oldest first.",
		Handler: func(ctx context.Context, in WebhookListInput) (WebhookList, error) {
			l, m, err := a.parts()
			if err != nil {
				return WebhookList{}, err
			}
			f := webhooks.ListFilters{Status: in.Status, EventType: in.EventType, Limit: in.Limit, Offset: in.Offset}
			seen, err := visibleWorkspaces(l, actor(ctx), accounts.RoleViewer)
			if err != nil {
				return WebhookList{}, err
			}
			if seen != nil {
				f.Visible = func(w *webhooks.Webhook) bool { return w.WorkspaceID != nil && seen[*w.WorkspaceID] }
			}
			ws, err := m.ListWebhooks(f)
			if ws == nil {
				ws = []*webhooks.Webhook{}
			}
			return WebhookList{Webhooks: ws, Count: len(ws)}, err
		},
	}
}

// webhookUpdate declares admin_webhook_update.
func (a *Area) webhookUpdate() sdk.Tool[WebhookUpdateInput, *webhooks.Webhook] {
	return sdk.Tool[WebhookUpdateInput, *webhooks.Webhook]{
		Name: "admin_webhook_update", Title: "Update webhook", OpenWorld: true, HonoursIdempotency: true,
		Description: "Change a webhook's url, event types, config, metadata or status.",
		Handler: keyed(a, "admin_webhook_update", nil, func(ctx context.Context, in WebhookUpdateInput, c *store.Call) (*webhooks.Webhook, error) {
			m, err := a.webhook(ctx, in.WebhookID, canManageWebhook)
			if err != nil {
				return nil, err
			}
			w, err := m.Keyed(c).UpdateWebhook(ctx, in.WebhookID, webhooks.Updates{URL: in.URL, Description: in.Description, EventTypes: in.EventTypes, Config: in.Config, Metadata: in.Metadata, Status: in.Status})
			if err == nil && w == nil {
				err = notFound("webhook_id", "webhook", in.WebhookID)
			}
			return w, err
		}),
	}
}

// webhookPause declares admin_webhook_pause.
func (a *Area) webhookPause() sdk.Tool[WebhookIDInput, Success] {
	return a.webhookStateChange("admin_webhook_pause", "Pause webhook", "Pause a webhook; its events are held in order until it is resumed.", webhooks.Keyed.Pause, false)
}

// webhookResume declares admin_webhook_resume.
func (a *Area) webhookResume() sdk.Tool[WebhookIDInput, Success] {
	return a.webhookStateChange("admin_webhook_resume", "Resume webhook", "Resume a paused webhook and deliver its held events in order.", webhooks.Keyed.Resume, false)
}

// webhookUnregister declares admin_webhook_unregister.
func (a *Area) webhookUnregister() sdk.Tool[WebhookIDInput, Success] {
	return a.webhookStateChange("admin_webhook_unregister", "Unregister webhook", "Delete a webhook and cancel its pending deliveries; its history stays.", webhooks.Keyed.Unregister, true)
}

// webhookStateChange declares a tool that applies f to one webhook the caller
// manages: pause, resume and unregister differ only in f.
func (a *Area) webhookStateChange(name, title, desc string, f func(k webhooks.Keyed, id string) (bool, error), destructive bool) sdk.Tool[WebhookIDInput, Success] {
	return sdk.Tool[WebhookIDInput, Success]{
		Name: name, Title: title, Description: desc, Idempotent: true, Destructive: destructive, HonoursIdempotency: true,
		Handler: keyed(a, name, func(c *store.Call, _ WebhookIDInput) {
			store.Present(c, func(ok bool) Success { return Success{Success: ok} })
		}, func(ctx context.Context, in WebhookIDInput, c *store.Call) (Success, error) {
			m, err := a.webhook(ctx, in.WebhookID, canManageWebhook)
			if err != nil {
				return Success{}, err
			}
			ok, err := f(m.Keyed(c), in.WebhookID)
			if err == nil && !ok {
				err = notFound("webhook_id", "webhook", in.WebhookID)
			}
			return Success{Success: ok}, err
		}),
	}
}

// webhookRotateSecret declares admin_webhook_rotate_secret.
func (a *Area) webhookRotateSecret() sdk.Tool[RotateSecretInput, RotatedSecret] {
	return sdk.Tool[RotateSecretInput, RotatedSecret]{
		Name: "admin_webhook_rotate_secret", Title: "Rotate webhook secret", HonoursIdempotency: true,
		Description: "Give a webhook a new signing secret (returned once); the old one also signs for 24 hours.",
		Handler: keyed(a, "admin_webhook_rotate_secret", func(c *store.Call, in RotateSecretInput) {
			c.Secrets(webhookNotice, "secret")
			store.Present(c, func(s string) RotatedSecret { return RotatedSecret{WebhookID: in.WebhookID, Secret: s} })
		}, func(ctx context.Context, in RotateSecretInput, c *store.Call) (RotatedSecret, error) {
			m, err := a.webhook(ctx, in.WebhookID, canManageWebhook)
			if err != nil {
				return RotatedSecret{}, err
			}
			s, err := m.Keyed(c).RotateSecret(in.WebhookID, in.Secret)
			if err == nil && s == "" {
				err = notFound("webhook_id", "webhook", in.WebhookID)
			}
			return RotatedSecret{WebhookID: in.WebhookID, Secret: s}, err
		}),
	}
}

// webhookTest declares admin_webhook_test.
func (a *Area) webhookTest() sdk.Tool[WebhookIDInput, *webhooks.TestResult] {
	return sdk.Tool[WebhookIDInput, *webhooks.TestResult]{
		Name: "admin_webhook_test", Title: "Test webhook", OpenWorld: true, HonoursIdempotency: true,
		Description: "Send one signed test ping to a webhook now and report its response.",
		Handler: keyed(a, "admin_webhook_test", nil, func(ctx context.Context, in WebhookIDInput, c *store.Call) (*webhooks.TestResult, error) {
			m, err := a.webhook(ctx, in.WebhookID, canManageWebhook)
			if err != nil {
				return nil, err
			}
			r, err := m.Keyed(c).TestWebhook(ctx, in.WebhookID)
			if err == nil && r == nil {
				err = notFound("webhook_id", "webhook", in.WebhookID)
			}
			return r, err
		}),
	}
}

// webhookDeliveries declares admin_webhook_deliveries.
func (a *Area) webhookDeliveries() sdk.Tool[DeliveriesInput, DeliveryList] {
	return sdk.Tool[DeliveriesInput, DeliveryList]{
		Name: "admin_webhook_deliveries", Title: "Webhook delivery history", ReadOnly: true, Idempotent: true,
		Description: "List a webhook's deliveries, newest first, with status, attempts and next retry.",
		Handler: func(ctx context.Context, in DeliveriesInput) (DeliveryList, error) {
			m, err := a.webhook(ctx, in.WebhookID, canSeeWebhook)
			if err != nil {
				return DeliveryList{}, err
			}
			ds, err := m.GetDeliveryHistory(in.WebhookID, webhooks.HistoryOptions{Status: in.Status, Limit: in.Limit, Offset: in.Offset})
			return DeliveryList{Deliveries: ds, Count: len(ds)}, err
		},
	}
}

// webhookStats declares admin_webhook_stats.
func (a *Area) webhookStats() sdk.Tool[NoInput, WebhookStats] {
	return sdk.Tool[NoInput, WebhookStats]{
		Name: "admin_webhook_stats", Title: "Webhook statistics", ReadOnly: true, Idempotent: true,
		Description: "Summarize webhooks by status and their deliveries: totals, success rate, latency, failures.",
		Handler: func(ctx context.Context, _ NoInput) (WebhookStats, error) {
			l, m, err := a.parts()
			if err != nil {
				return WebhookStats{}, err
			}
			seen, err := visibleWorkspaces(l, actor(ctx), accounts.RoleViewer)
			if err != nil {
				return WebhookStats{}, err
			}
			var keep func(*webhooks.Webhook) bool
			var keepID func(string) bool
			if seen != nil {
				ids := map[string]bool{}
				keep = func(w *webhooks.Webhook) bool {
					ok := w.WorkspaceID != nil && seen[*w.WorkspaceID]
					if ok {
						ids[w.ID] = true
					}
					return ok
				}
				keepID = func(id string) bool { return ids[id] }
			}
			ws, err := m.GetStatsWhere(keep)
			if err != nil {
				return WebhookStats{}, err
			}
			ds, err := m.GetDeliveryStatsWhere(keepID)
			return WebhookStats{Webhooks: ws, Deliveries: ds}, err
		},
	}
}

// eventTrigger declares admin_event_trigger.
func (a *Area) eventTrigger() sdk.Tool[TriggerInput, *webhooks.TriggerResult] {
	return sdk.Tool[TriggerInput, *webhooks.TriggerResult]{
		Name: "admin_event_trigger", Title: "Trigger event", OpenWorld: true, HonoursIdempotency: true,
		Description: "Fire an event at the webhooks subscribed to it and report the first delivery attempts.",
		Handler: keyed(a, "admin_event_trigger", nil, func(ctx context.Context, in TriggerInput, c *store.Call) (*webhooks.TriggerResult, error) {
			l, m, err := a.parts()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if in.WorkspaceID == "" {
				if err := requireOperator(by, "workspace_id", "an event for every workspace's webhooks"); err != nil {
					return nil, err
				}
			} else if _, err := l.RoleOf(in.WorkspaceID, by.ID); err != nil {
				return nil, err
			} else if err := l.RequireRole(in.WorkspaceID, by, accounts.RoleAdmin); err != nil {
				return nil, err
			}
			var payload any = in.Payload
			if in.Payload == nil {
				payload = map[string]any{}
			}
			return m.Keyed(c).TriggerEventFor(ctx, in.WorkspaceID, in.EventType, payload)
		}),
	}
}

// eventTypes declares admin_event_types.
func (a *Area) eventTypes() sdk.Tool[NoInput, EventTypes] {
	return sdk.Tool[NoInput, EventTypes]{
		Name: "admin_event_types", Title: "Webhook event types", ReadOnly: true, Idempotent: true,
		Description: "List the event types (and category.* groups) a webhook can subscribe to.",
		Handler: func(context.Context, NoInput) (EventTypes, error) {
			return EventTypes{EventTypes: webhooks.EventTypes(), Categories: webhooks.Categories()}, nil
		},
	}
}

// webhook loads a webhook (404 when unknown) the caller may see or manage.
func (a *Area) webhook(ctx context.Context, id string, check func(*accounts.Admin, *webhooks.Webhook, accounts.Actor) error) (*webhooks.Manager, error) {
	l, m, err := a.parts()
	if err != nil {
		return nil, err
	}
	w, err := m.GetWebhook(id)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, notFound("webhook_id", "webhook", id)
	}
	return m, check(l, w, actor(ctx))
}
