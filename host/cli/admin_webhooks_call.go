package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn admin webhooks …`: the admin area's webhook tools.

var hookCols = columns("ID\tURL\tEVENTS\tSTATUS\tDELIVERED\tFAILED\tCREATED", "id", "url", "eventTypes", "status", "stats.successfulDeliveries", "stats.failedDeliveries", "createdAt")

// deliveryRanges refuses --max-retries and --timeout outside what the
// webhook manager takes (the schema states it in words only).
func deliveryRanges(cmd *cobra.Command) error {
	if cmd.Flags().Changed("max-retries") {
		if v, _ := cmd.Flags().GetInt64("max-retries"); v < 0 || v > 10 {
			return usageAt(cmd, "--max-retries must be between 0 and 10 (got %d)", v)
		}
	}
	if cmd.Flags().Changed("timeout") {
		if v, _ := cmd.Flags().GetInt64("timeout"); v < 100 || v > 60000 {
			return usageAt(cmd, "--timeout must be between 100 and 60000 ms (got %d)", v)
		}
	}
	return nil
}

// hookDone prints what a verb did to the webhook it named.
func hookDone(done string) func(io.Writer, obj, obj) {
	return func(w io.Writer, _, in obj) { fmt.Fprintf(w, "webhook %s %s\n", str(in, "webhook_id"), done) }
}

func adminWebhooks(b toolcmd.Builder) *cobra.Command {
	id := []string{"webhook_id"}
	return toolcmd.Group("webhooks", "Register, test and inspect signed webhooks",
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_register", Use: "register", Args: []string{"url"},
			Short:   "Register a webhook (the secret is printed once)",
			Flatten: []string{"config"},
			Prepare: func(inv *toolcmd.Invocation) error { return deliveryRanges(inv.Cmd) },
			Check: func(inv *toolcmd.Invocation, out obj) error {
				if ok, _ := out["success"].(bool); !ok {
					return errs.Invalidf("url", "webhook", "webhook %s not registered: %s", str(inv.In, "url"), str(out, "error"))
				}
				return nil
			},
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintf(w, "webhook %s registered for %s\n\nSigning secret (shown once, store it now):\n%s\n", str(v, "webhook.id"), str(v, "webhook.url"), str(v, "webhook.secret"))
			},
		}),
		b.Command(toolcmd.Spec{Tool: "admin_webhook_list", Use: "list", Short: "List webhooks", Render: list(hookCols, "webhooks")}),
		b.Command(toolcmd.Spec{Tool: "admin_webhook_get", Use: "get", Args: id, Short: "Show a webhook", Render: one(hookCols)}),
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_update", Use: "update", Args: id,
			Short:   "Change a webhook's url, events, status or delivery config",
			Flatten: []string{"config"},
			Prepare: func(inv *toolcmd.Invocation) error {
				if err := deliveryRanges(inv.Cmd); err != nil {
					return err
				}
				return nothingToChange(inv, "webhooks", str(inv.In, "webhook_id"))
			},
			Render: one(hookCols),
		}),
		b.Command(toolcmd.Spec{Tool: "admin_webhook_pause", Use: "pause", Args: id, Short: "Hold deliveries to a webhook until it is resumed", Render: hookDone("paused")}),
		b.Command(toolcmd.Spec{Tool: "admin_webhook_resume", Use: "resume", Args: id, Short: "Make a webhook active again and deliver what was held", Render: hookDone("resumed")}),
		b.Command(toolcmd.Spec{Tool: "admin_webhook_unregister", Use: "unregister", Args: id, Short: "Delete a webhook (history stays)", Render: hookDone("unregistered")}),
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_rotate_secret", Use: "rotate-secret", Args: id,
			Short: "Give a webhook a new secret (printed once; the old one signs for 24 h more)",
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintf(w, "New signing secret (shown once):\n%s\n", str(v, "secret"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_test", Use: "test", Args: id, Short: "Send a signed webhook.test ping now",
			Render: one(columns("SUCCESS\tSTATUS\tMS\tERROR", "success", "statusCode", "duration", "error")),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_deliveries", Use: "deliveries", Args: id, Short: "Show a webhook's delivery history",
			Defaults: map[string]any{"limit": 500},
			Render:   list(columns("ID\tEVENT\tSTATUS\tATTEMPTS\tCODE\tMS\tNEXT ATTEMPT\tCREATED", "id", "eventType", "status", "attempts", "statusCode", "duration", "nextAttemptAt", "createdAt"), "deliveries"),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_webhook_stats", Use: "stats", Short: "Summarize webhooks and deliveries",
			Render: func(w io.Writer, v, _ obj) {
				fmt.Fprintln(w, "WEBHOOKS\tACTIVE\tPAUSED\tDISABLED\tERROR")
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n\n", str(v, "webhooks.total"), zero(str(v, "webhooks.byStatus.active")), zero(str(v, "webhooks.byStatus.paused")), zero(str(v, "webhooks.byStatus.disabled")), zero(str(v, "webhooks.byStatus.error")))
				fmt.Fprintln(w, "DELIVERIES\tDELIVERED\tFAILED\tPENDING\tHELD\tSUCCESS %\tAVG MS")
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", str(v, "deliveries.totalDeliveries"), str(v, "deliveries.delivered"), str(v, "deliveries.failed"), str(v, "deliveries.pending"), str(v, "deliveries.held"), str(v, "deliveries.successRate"), str(v, "deliveries.averageResponseTime"))
			},
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_event_trigger", Use: "trigger", Args: []string{"event_type"}, Short: "Fire an event at the subscribed webhooks now",
			Render: one(columns("TRIGGERED\tDELIVERED\tFAILED\tPENDING\tHELD", "triggered", "delivered", "failed", "pending", "held")),
		}),
		b.Command(toolcmd.Spec{
			Tool: "admin_event_types", Use: "event-types", Short: "List the event types webhooks can subscribe to",
			Render: func(w io.Writer, v, _ obj) {
				list, _ := v["event_types"].([]any)
				for _, t := range list {
					fmt.Fprintln(w, t)
				}
			},
		}),
	)
}
