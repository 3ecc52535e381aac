// Package ui is cairn's web dashboard (docs/decisions.md D25): served by the shared
// daemon of a data dir on a loopback port, behind a one-time login token, it
// shows the task board, decision trails, audit sessions, the spec-driven
// workflow and the system, live from the event bus. Every page reads through
// the areas' tools (never their store files) and every action is a tool call
// made as the person who logged in.
package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
)

// Backend is what the dashboard needs from the host; *host.Host is one.
type Backend interface {
	Call(ctx context.Context, name string, args json.RawMessage, caller pipeline.Caller) *pipeline.Outcome
	CallInternal(ctx context.Context, name string, args json.RawMessage, caller pipeline.Caller) *pipeline.Outcome
	Bus() *events.Bus
	Health(ctx context.Context) host.HealthOutput
}

// Config are the dashboard's inputs besides the backend.
type Config struct {
	// DataDir holds ui.json (port and cookie key) and the audit signing key.
	DataDir string
	// KeyFile is CAIRN_AUDIT_KEY_FILE ("" for the data dir's key).
	KeyFile string
	// KeyName names the audit checkpoint signer, as `cairn audit` names it.
	KeyName string
	// Status, when set, returns the daemon's status (its sessions) for the
	// system page.
	Status func() (json.RawMessage, error)
	// Plugins, when set, gives the supervisor's view of the plugins for the
	// system page (last exits, trust).
	Plugins PluginStates
	// KeepAlive, when set, is called when a page's live stream opens; the
	// returned function is called when it closes. The daemon counts open
	// pages as a session with it, so it does not exit under a reader.
	KeepAlive func() (release func())
	// Logf logs a line.
	Logf func(format string, args ...any)
}

// Server is one running dashboard.
type Server struct {
	cfg    Config
	be     Backend
	port   string
	secret []byte
	toks   tokens
	srv    *http.Server
	ln     net.Listener
	now    func() time.Time

	liveMu sync.Mutex
	live   int
	hold   func()
}

// Start listens on the data dir's dashboard port (chosen at the first start
// and recorded in ui.json) and serves until Stop.
func Start(be Backend, cfg Config) (*Server, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.KeyName == "" {
		cfg.KeyName = "cairn"
	}
	ln, st, err := listen(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, be: be, port: strconv.Itoa(st.Port), secret: st.Secret, ln: ln, now: time.Now}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Logf("dashboard stopped: %v", err)
		}
	}()
	cfg.Logf("dashboard on http://127.0.0.1:%s/", s.port)
	return s, nil
}

// Port returns the port the dashboard listens on.
func (s *Server) Port() string { return s.port }

// Stop closes the listener and every open page's stream.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
}

// LoginURL issues a fresh one-time token for g and returns the URL that
// exchanges it for a session cookie.
func (s *Server) LoginURL(g Grant) string {
	tok := s.toks.issue(g, s.now())
	return fmt.Sprintf("http://127.0.0.1:%s/login?token=%s", s.port, url.QueryEscape(tok))
}

// cookieName carries the port: cookies are per host, not per port, and two
// data dirs' dashboards on one machine must not overwrite each other's.
func (s *Server) cookieName() string { return "cairn_ui_" + s.port }

// Handler is the dashboard's HTTP handler with its guard in front.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.login)
	mux.Handle("GET /assets/", assetHandler())
	mux.HandleFunc("GET /{$}", s.landing)
	mux.HandleFunc("GET /board", s.page("board", s.boardData))
	mux.HandleFunc("GET /task/{id}", s.page("task", s.taskData))
	mux.HandleFunc("GET /audits", s.page("audits", s.auditsData))
	mux.HandleFunc("GET /audits/{id}", s.page("audit", s.auditData))
	mux.HandleFunc("GET /audits/{id}/bundle", s.bundle)
	mux.HandleFunc("POST /audits/verify", s.verifyUpload)
	mux.HandleFunc("GET /sdd", s.page("sdd", s.sddData))
	mux.HandleFunc("GET /system", s.page("system", s.systemData))
	mux.HandleFunc("GET /api/tasks", s.apiTasks)
	mux.HandleFunc("POST /api/task/{id}/action", s.apiAction)
	mux.HandleFunc("GET /events", s.events)
	return s.guard(mux)
}

type grantKey struct{}

func grantFrom(ctx context.Context) Grant {
	g, _ := ctx.Value(grantKey{}).(Grant)
	return g
}

// guard refuses any request for another Host (DNS rebinding) or from a
// foreign Origin, and anything but the login and the assets without a valid
// session cookie.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !hostAllowed(r.Host, s.port) {
			http.Error(w, "refused: this dashboard answers only to 127.0.0.1:"+s.port, http.StatusMisdirectedRequest)
			return
		}
		if !originAllowed(r, s.port) {
			http.Error(w, "refused: cross-origin request", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/login" || (len(r.URL.Path) > 8 && r.URL.Path[:8] == "/assets/") {
			next.ServeHTTP(w, r)
			return
		}
		c, err := r.Cookie(s.cookieName())
		var g Grant
		ok := err == nil
		if ok {
			g, ok = openCookie(s.secret, c.Value, s.now())
		}
		if !ok {
			h.Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, "Not logged in. Run `cairn ui` and open the URL it prints.")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	g, ok := s.toks.redeem(r.URL.Query().Get("token"), s.now())
	if !ok {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "This login link is unknown, used or expired. Run `cairn ui` for a fresh one.", http.StatusUnauthorized)
		return
	}
	g.Expires = s.now().Add(SessionTTL).Unix()
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: sealCookie(s.secret, g), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second),
	})
	target := "/board"
	if g.Project != "" {
		target += "?project=" + url.QueryEscape(g.Project)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (s *Server) landing(w http.ResponseWriter, r *http.Request) {
	target := "/board"
	if p := grantFrom(r.Context()).Project; p != "" {
		target += "?project=" + url.QueryEscape(p)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
