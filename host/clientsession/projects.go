package clientsession

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// Projects remembers, per MCP session, the project its calls last
// named, so a later call without `project` stays in it (docs/decisions.md
// D31): the session's CAIRN_PROJECT, else the project it used last, else
// the workspace slug. It is kept per session, not on the settings, which
// HTTP sessions share.
type Projects struct{ last sync.Map }

var projectKey = []string{"project"}

// Active is the project a call of the session in ctx works in by default.
func (p *Projects) Active(ctx context.Context, s *Settings) string {
	if s.ProjectSet {
		return s.Project
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if v, ok := p.last.Load(sess.SessionID()); ok {
			return v.(string)
		}
	}
	return s.Project
}

// Note records the project a successful call named explicitly.
func (p *Projects) Note(ctx context.Context, s *Settings, args json.RawMessage) {
	if s.ProjectSet || len(args) == 0 {
		return
	}
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || sess.SessionID() == "" {
		return
	}
	spans := make([][2]int, 1)
	sc := rawjson.Scanner{B: args}
	if !sc.Members(projectKey, spans) || spans[0][1] == 0 {
		return
	}
	project, ok := rawjson.PlainString(args[spans[0][0]:spans[0][1]])
	if !ok || !config.ValidProject(project) {
		return
	}
	if v, ok := p.last.Load(sess.SessionID()); ok && v.(string) == project {
		return
	}
	p.last.Store(sess.SessionID(), project)
}

// Hook forgets a session's project when the session ends.
func (p *Projects) Hook(hooks *server.Hooks) {
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		p.last.Delete(sess.SessionID())
	})
}
