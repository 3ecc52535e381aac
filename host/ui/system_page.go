package ui

// The system page: plugins, pipeline, sessions, skills, webhook
// deliveries.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// webhookView is one webhook with its latest deliveries, in the admin
// area's JSON names.
type webhookView struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Status     string   `json:"status"`
	EventTypes []string `json:"eventTypes"`
	Deliveries []deliveryView
	Err        *errs.Error
}

type deliveryView struct {
	ID            string `json:"id"`
	EventType     string `json:"eventType"`
	Status        string `json:"status"`
	StatusCode    int    `json:"statusCode"`
	Attempts      int    `json:"attempts"`
	UpdatedAt     string `json:"updatedAt"`
	NextAttemptAt string `json:"nextAttemptAt"`
	LastError     string `json:"lastError"`
	Reason        string `json:"reason"`
	Test          bool   `json:"test"`
}

// WebhooksShown and DeliveriesShown bound the system page's webhook section.
const (
	WebhooksShown   = 20
	DeliveriesShown = 10
)

type systemView struct {
	Health          systemtools.HealthOutput
	Plugins         []pluginRow
	Sessions        []daemon.SessionInfo
	SessionErr      string
	DefaultToolsets string
	Skills          []map[string]any
	SkillErr        *errs.Error
	SkillProbs      []string
	Webhooks        []webhookView
	AdminErr        *errs.Error
}

func (s *Server) systemData(r *http.Request, g Grant) (any, *errs.Error) {
	ctx := r.Context()
	v := systemView{Health: s.be.Health(ctx), DefaultToolsets: config.DefaultToolsets}
	v.Plugins = pluginRows(v.Health.Plugins, s.cfg.Plugins)
	for _, p := range v.Health.Problems {
		if strings.Contains(strings.ToLower(p), "skill") {
			v.SkillProbs = append(v.SkillProbs, p)
		}
	}
	if s.cfg.Status != nil {
		raw, err := s.cfg.Status()
		var st struct {
			Sessions []daemon.SessionInfo `json:"sessions"`
		}
		if err != nil {
			v.SessionErr = err.Error()
		} else if err := json.Unmarshal(raw, &st); err != nil {
			v.SessionErr = err.Error()
		}
		v.Sessions = st.Sessions
	}
	var sk struct {
		Skills []map[string]any `json:"skills"`
	}
	v.SkillErr = s.call(ctx, g, "skill_list", map[string]any{}, &sk)
	v.Skills = sk.Skills
	var wl struct {
		Webhooks []webhookView `json:"webhooks"`
	}
	if e := s.call(ctx, g, "admin_webhook_list", map[string]any{"limit": WebhooksShown}, &wl); e != nil {
		v.AdminErr = e
		return v, nil
	}
	for _, wh := range wl.Webhooks {
		var d struct {
			Deliveries []deliveryView `json:"deliveries"`
		}
		wh.Err = s.call(ctx, g, "admin_webhook_deliveries", map[string]any{"webhook_id": wh.ID, "limit": DeliveriesShown}, &d)
		wh.Deliveries = d.Deliveries
		v.Webhooks = append(v.Webhooks, wh)
	}
	return v, nil
}
