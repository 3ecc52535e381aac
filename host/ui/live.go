package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
)

// liveTypes are the event categories a page reacts to.
var liveTypes = []string{"task.", "thought.", "audit.", "sdd.", "project."}

func isLive(t string) bool {
	for _, p := range liveTypes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// RetryMillis is how soon a page's EventSource reconnects after the stream
// ends (a daemon restart, for instance).
const RetryMillis = 500

// events streams the bus to a page as server-sent events. Each event carries
// its bus id, type and data; the page refetches what the event touches.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", 500)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	release := s.pageOpened()
	defer release()

	ch := make(chan events.Event, 256)
	unsub := s.be.Bus().Subscribe("dashboard", "*", func(ev events.Event) {
		if !isLive(ev.Type) {
			return
		}
		select {
		case ch <- ev:
		default: // a page that cannot keep up refetches on its next event
		}
	})
	defer unsub()
	fmt.Fprintf(w, "retry: %d\n: cairn dashboard stream\n\n", RetryMillis)
	fl.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
			fl.Flush()
		case ev := <-ch:
			data, _ := json.Marshal(map[string]any{"type": ev.Type, "time": ev.Time, "data": ev.Data})
			fmt.Fprintf(w, "id: %s\nevent: change\ndata: %s\n\n", ev.ID, data)
			fl.Flush()
		}
	}
}

// pageOpened counts an open page; the first one takes the keep-alive hold
// and the last one to close releases it.
func (s *Server) pageOpened() (release func()) {
	s.liveMu.Lock()
	s.live++
	if s.live == 1 && s.cfg.KeepAlive != nil {
		s.hold = s.cfg.KeepAlive()
	}
	s.liveMu.Unlock()
	return func() {
		s.liveMu.Lock()
		defer s.liveMu.Unlock()
		s.live--
		if s.live == 0 && s.hold != nil {
			s.hold()
			s.hold = nil
		}
	}
}
