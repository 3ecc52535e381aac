package mcpserver

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
)

// announceProject registers a session's active project with the areas
// (D21, D24): the core area takes project.created as `cairn project add`.
func (srv *Server) announceProject(s *clientsession.Settings) {
	if s == nil || s.Project == "" || s.Mode == config.ModeMinimal {
		return
	}
	data, _ := json.Marshal(map[string]string{"slug": s.Project})
	srv.bus.Publish(events.Event{Type: ProjectCreatedEvent, Source: "host", Data: data})
}

// ProjectCreatedEvent announces a project slug to the core area.
const ProjectCreatedEvent = "project.created"

// AnnounceProject registers a listener's active project with the areas, as
// a stdio session's start does (D24).
func (srv *Server) AnnounceProject(s *clientsession.Settings) { srv.announceProject(s) }
