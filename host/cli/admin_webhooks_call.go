package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn admin webhooks …`: the admin area's webhook tools.

var hookCols = columns("ID\tURL\tEVENTS\tSTATUS\tDELIVERED\tFAILED\tCREATED", "id", "url", "eventTypes", "status", "stats.successfulDeliveries", "stats.failedDeliveries", "createdAt")

func adminWebhooks(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "webhooks", Short: "Register, test and inspect signed webhooks"}
	// deliveryConfig reads --max-retries and --timeout when set.
	deliveryFlags := func(c *cobra.Command) {
		c.Flags().Int("max-retries", 5, "retries per delivery (0-10)")
		c.Flags().Int("timeout", 10000, "per-attempt timeout in ms (100-60000)")
	}
	deliveryConfig := func(c *cobra.Command) (obj, error) {
		o := obj{}
		if c.Flags().Changed("max-retries") {
			v, _ := c.Flags().GetInt("max-retries")
			if v < 0 || v > 10 {
				return nil, usagef("--max-retries must be between 0 and 10 (got %d)", v)
			}
			o["maxRetries"] = v
		}
		if c.Flags().Changed("timeout") {
			v, _ := c.Flags().GetInt("timeout")
			if v < 100 || v > 60000 {
				return nil, usagef("--timeout must be between 100 and 60000 ms (got %d)", v)
			}
			o["timeout"] = v
		}
		if len(o) == 0 {
			return nil, nil
		}
		return o, nil
	}

	reg := &cobra.Command{Use: "register <url>", Short: "Register a webhook (the secret is printed once)", Args: cobra.ExactArgs(1)}
	reg.Flags().StringSlice("event", nil, "event type or pattern (repeatable; * or category.*; default every event)")
	reg.Flags().String("description", "", "description")
	reg.Flags().String("secret", "", "signing secret (default: generated)")
	reg.Flags().String("workspace", "", "receive only this workspace's events (default: every workspace's)")
	deliveryFlags(reg)
	reg.RunE = run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		in := obj{"url": args[0]}
		set(cmd, in, map[string]string{"event": "event_types", "description": "description", "secret": "secret", "workspace": "workspace_id"})
		cfg, err := deliveryConfig(cmd)
		if err != nil {
			return nil, nil, err
		}
		if cfg != nil {
			in["config"] = cfg
		}
		var r struct {
			Success bool   `json:"success"`
			Error   string `json:"error"`
		}
		out, err := c.call(cmd.Context(), "admin_webhook_register", in, &r)
		if err == nil && !r.Success {
			err = errs.Invalidf("url", "webhook", "webhook %s not registered: %s", args[0], r.Error)
		}
		return out, func(w io.Writer, v obj) {
			fmt.Fprintf(w, "webhook %s registered for %s\n\nSigning secret (shown once, store it now):\n%s\n", str(v, "webhook.id"), str(v, "webhook.url"), str(v, "webhook.secret"))
		}, err
	})

	ls := &cobra.Command{Use: "list", Short: "List webhooks", Args: cobra.NoArgs}
	ls.Flags().String("status", "", "active, paused, disabled or error")
	ls.Flags().String("event", "", "only webhooks receiving this event type")
	ls.Flags().Int("limit", 0, "at most this many")
	ls.RunE = run(f, reads, simpleCall("admin_webhook_list", func(cmd *cobra.Command, _ []string) (obj, error) {
		in := obj{}
		set(cmd, in, map[string]string{"status": "status", "event": "event_type", "limit": "limit"})
		return in, nil
	}, list(hookCols, "webhooks")))

	get := &cobra.Command{
		Use: "get <webhook-id>", Short: "Show a webhook", Args: cobra.ExactArgs(1),
		RunE: run(f, reads, simpleCall("admin_webhook_get", id("webhook_id"), one(hookCols))),
	}

	update := &cobra.Command{Use: "update <webhook-id>", Short: "Change a webhook's url, events, status or delivery config", Args: cobra.ExactArgs(1)}
	update.Flags().String("url", "", "new URL")
	update.Flags().StringSlice("event", nil, "event types (replaces the list)")
	update.Flags().String("status", "", "active, paused, disabled or error")
	update.Flags().String("description", "", "description")
	deliveryFlags(update)
	update.RunE = run(f, writes, simpleCall("admin_webhook_update", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"webhook_id": args[0]}
		set(cmd, in, map[string]string{"url": "url", "event": "event_types", "status": "status", "description": "description"})
		cfg, err := deliveryConfig(cmd)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			in["config"] = cfg
		}
		if len(in) == 1 {
			return nil, usagef("webhooks update %s: name something to change (--url, --event, --status, --description, --max-retries, --timeout)", args[0])
		}
		return in, nil
	}, one(hookCols)))

	simple := func(use, short, tool, done string) *cobra.Command {
		return &cobra.Command{
			Use: use + " <webhook-id>", Short: short, Args: cobra.ExactArgs(1),
			RunE: run(f, writes, func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
				out, err := c.call(cmd.Context(), tool, obj{"webhook_id": args[0]}, nil)
				return out, func(w io.Writer, _ obj) { fmt.Fprintf(w, "webhook %s %s\n", args[0], done) }, err
			}),
		}
	}
	rot := &cobra.Command{Use: "rotate-secret <webhook-id>", Short: "Give a webhook a new secret (printed once; the old one signs for 24 h more)", Args: cobra.ExactArgs(1)}
	rot.Flags().String("secret", "", "new secret (default: generated)")
	rot.RunE = run(f, writes, simpleCall("admin_webhook_rotate_secret", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"webhook_id": args[0]}
		set(cmd, in, map[string]string{"secret": "secret"})
		return in, nil
	}, func(w io.Writer, v obj) { fmt.Fprintf(w, "New signing secret (shown once):\n%s\n", str(v, "secret")) }))

	test := &cobra.Command{
		Use: "test <webhook-id>", Short: "Send a signed webhook.test ping now", Args: cobra.ExactArgs(1),
		RunE: run(f, writes, simpleCall("admin_webhook_test", id("webhook_id"), one(columns("SUCCESS\tSTATUS\tMS\tERROR", "success", "statusCode", "duration", "error")))),
	}
	deliveries := &cobra.Command{Use: "deliveries <webhook-id>", Short: "Show a webhook's delivery history", Args: cobra.ExactArgs(1)}
	deliveries.Flags().String("status", "", "pending, held, delivered, failed, cancelled or expired")
	deliveries.RunE = run(f, reads, simpleCall("admin_webhook_deliveries", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"webhook_id": args[0], "limit": 500}
		set(cmd, in, map[string]string{"status": "status"})
		return in, nil
	}, list(columns("ID\tEVENT\tSTATUS\tATTEMPTS\tCODE\tMS\tNEXT ATTEMPT\tCREATED", "id", "eventType", "status", "attempts", "statusCode", "duration", "nextAttemptAt", "createdAt"), "deliveries")))

	stats := &cobra.Command{
		Use: "stats", Short: "Summarize webhooks and deliveries", Args: cobra.NoArgs,
		RunE: run(f, reads, simpleCall("admin_webhook_stats", func(*cobra.Command, []string) (obj, error) { return obj{}, nil }, func(w io.Writer, v obj) {
			fmt.Fprintln(w, "WEBHOOKS\tACTIVE\tPAUSED\tDISABLED\tERROR")
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n\n", str(v, "webhooks.total"), zero(str(v, "webhooks.byStatus.active")), zero(str(v, "webhooks.byStatus.paused")), zero(str(v, "webhooks.byStatus.disabled")), zero(str(v, "webhooks.byStatus.error")))
			fmt.Fprintln(w, "DELIVERIES\tDELIVERED\tFAILED\tPENDING\tHELD\tSUCCESS %\tAVG MS")
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", str(v, "deliveries.totalDeliveries"), str(v, "deliveries.delivered"), str(v, "deliveries.failed"), str(v, "deliveries.pending"), str(v, "deliveries.held"), str(v, "deliveries.successRate"), str(v, "deliveries.averageResponseTime"))
		})),
	}
	trigger := &cobra.Command{Use: "trigger <event-type>", Short: "Fire an event at the subscribed webhooks now", Args: cobra.ExactArgs(1)}
	trigger.Flags().String("payload", "", "event data as a JSON object")
	trigger.Flags().String("workspace", "", "fire only at this workspace's webhooks")
	trigger.RunE = run(f, writes, simpleCall("admin_event_trigger", func(cmd *cobra.Command, args []string) (obj, error) {
		in := obj{"event_type": args[0]}
		if p, _ := cmd.Flags().GetString("payload"); p != "" {
			var data obj
			if err := json.Unmarshal([]byte(p), &data); err != nil {
				return nil, usagef("--payload must be a JSON object such as '{\"task_id\":\"T-1\"}': %v", err)
			}
			in["payload"] = data
		}
		set(cmd, in, map[string]string{"workspace": "workspace_id"})
		return in, nil
	}, one(columns("TRIGGERED\tDELIVERED\tFAILED\tPENDING\tHELD", "triggered", "delivered", "failed", "pending", "held"))))
	types := &cobra.Command{
		Use: "event-types", Short: "List the event types webhooks can subscribe to", Args: cobra.NoArgs,
		RunE: run(f, reads, simpleCall("admin_event_types", func(*cobra.Command, []string) (obj, error) { return obj{}, nil }, func(w io.Writer, v obj) {
			list, _ := v["event_types"].([]any)
			for _, t := range list {
				fmt.Fprintln(w, t)
			}
		})),
	}
	cmd.AddCommand(reg, ls, get, update,
		simple("pause", "Hold deliveries to a webhook until it is resumed", "admin_webhook_pause", "paused"),
		simple("resume", "Make a webhook active again and deliver what was held", "admin_webhook_resume", "resumed"),
		simple("unregister", "Delete a webhook (history stays)", "admin_webhook_unregister", "unregistered"),
		rot, test, deliveries, stats, trigger, types)
	return cmd
}
