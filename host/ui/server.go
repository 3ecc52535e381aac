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
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Backend is what the dashboard needs from the host: its calls
// (host/mcpserver), its bus and its health (host/systemtools).
type Backend interface {
	Call(ctx context.Context, name string, args json.RawMessage, caller seam.Caller) *seam.Result
	CallInternal(ctx context.Context, name string, args json.RawMessage, caller seam.Caller) *seam.Result
	Bus() *events.Bus
	Health(ctx context.Context) systemtools.HealthOutput
}

// Config are the dashboard's inputs besides the backend.
type Config struct {
	// DataDir holds ui.json (port and cookie key) and the audit signing key.
	DataDir string
	// KeyFile is CAIRN_AUDIT_KEY_FILE ("" for the data dir's key).
	KeyFile string
	// KeyName names the audit checkpoint signer, as `cairn audit` names it.
	KeyName string
	// TSAURL is CAIRN_AUDIT_TSA_URL: when set, a Sigstore download is
	// anchored in that timestamp authority, as `cairn audit export` is.
	TSAURL string
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

// LoginURL issues a fresh one-time token for g and returns the URL whose
// page exchanges it for a session secret.
func (s *Server) LoginURL(g Grant) string {
	tok := s.toks.issue(g, s.now())
	return fmt.Sprintf("http://127.0.0.1:%s/login?token=%s", s.port, url.QueryEscape(tok))
}

// oldCookieName is the session cookie earlier versions set: cookies are per
// host, not per port, so every server on another loopback port received
// it. The login expires it; nothing reads it.
func (s *Server) oldCookieName() string { return "cairn_ui_" + s.port }

// shellPaths are the addresses a person navigates to. Each answers the same
// static page, without a session: a navigation cannot carry a header, and
// the page holds no data. Its script fetches the page's content from /view/
// with the session in the Authorization header.
var shellPaths = []string{"/{$}", "/login", "/board", "/task/{id}", "/audits", "/audits/{id}", "/sdd", "/system", "/graph", "/burnup", "/approvals"}

// Handler is the dashboard's HTTP handler with its guard in front.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, p := range shellPaths {
		mux.HandleFunc("GET "+p, s.shell)
	}
	mux.Handle("GET /assets/", assetHandler())
	mux.HandleFunc("POST /api/login", s.login)
	mux.HandleFunc("GET /view/board", s.page("board", s.boardData))
	mux.HandleFunc("GET /view/task/{id}", s.page("task", s.taskData))
	mux.HandleFunc("GET /view/audits", s.page("audits", s.auditsData))
	mux.HandleFunc("GET /view/audits/{id}", s.page("audit", s.auditData))
	mux.HandleFunc("GET /view/sdd", s.page("sdd", s.sddData))
	mux.HandleFunc("GET /view/system", s.page("system", s.systemData))
	mux.HandleFunc("GET /api/audits/{id}/bundle", s.bundle)
	mux.HandleFunc("POST /api/audits/verify", s.verifyUpload)
	mux.HandleFunc("GET /api/tasks", s.apiTasks)
	mux.HandleFunc("POST /api/task/{id}/action", s.apiAction)
	mux.HandleFunc("POST /api/tasks", s.apiCreate)
	mux.HandleFunc("POST /api/task/{id}/edit", s.apiEdit)
	mux.HandleFunc("GET /view/graph", s.page("graph", s.graphData))
	mux.HandleFunc("GET /view/burnup", s.page("burnup", s.burnupData))
	mux.HandleFunc("GET /view/approvals", s.page("approvals", s.approvalsData))
	mux.HandleFunc("POST /api/task/{id}/approve", s.apiApprove)
	mux.HandleFunc("POST /api/sdd/gate/{phase}/approve", s.apiGateApprove)
	mux.HandleFunc("GET /api/approvals/count", s.apiPendingCount)
	mux.HandleFunc("GET /events", s.events)
	return s.guard(mux)
}

type grantKey struct{}

func grantFrom(ctx context.Context) Grant {
	g, _ := ctx.Value(grantKey{}).(Grant)
	return g
}

// public reports whether a path is answered without a session: the static
// page shell, the embedded assets and the login exchange (which needs the
// one-time token instead).
func public(path string) bool {
	switch {
	case strings.HasPrefix(path, "/assets/"), path == "/api/login":
		return true
	case strings.HasPrefix(path, "/api/"), strings.HasPrefix(path, "/view/"), path == "/events":
		return false
	}
	return true // a shell path, or none (404)
}

// guard refuses any request for another Host (DNS rebinding), every CORS
// preflight (no other origin may send a header to the dashboard), and any
// request for data or an action that does not come from the dashboard's own
// origin with a valid session secret in its Authorization header. Cookies
// play no part: a server on another loopback port receives the browser's
// cookies for 127.0.0.1, never this origin's sessionStorage.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !hostAllowed(r.Host, s.port) {
			http.Error(w, "refused: this dashboard answers only to 127.0.0.1:"+s.port, http.StatusMisdirectedRequest)
			return
		}
		if r.Method == http.MethodOptions {
			http.Error(w, "refused: no cross-origin access", http.StatusForbidden)
			return
		}
		if public(r.URL.Path) && r.URL.Path != "/api/login" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Cache-Control", "no-store")
		if !originAllowed(r, s.port) || (r.URL.Path == "/api/login" && r.Header.Get("Origin") == "") {
			http.Error(w, "refused: cross-origin request", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/api/login" {
			next.ServeHTTP(w, r)
			return
		}
		g, ok := openSession(s.secret, bearer(r), s.now())
		if !ok {
			http.Error(w, "Not logged in. Run `cairn ui` and open the URL it prints.", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

// shell answers every page address with the same static page: no data, no
// session needed. On /login it also expires the session cookie earlier
// versions set.
func (s *Server) shell(w http.ResponseWriter, r *http.Request) {
	page, err := templateFS.ReadFile("templates/shell.html")
	if err != nil {
		http.Error(w, "shell: "+err.Error(), 500)
		return
	}
	if r.URL.Path == "/login" {
		http.SetCookie(w, &http.Cookie{Name: s.oldCookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(page)
}

// loginInput is what the login page posts: the token from its URL.
type loginInput struct {
	Token string `json:"token"`
}

// loginOutput is the session the page keeps in its origin's sessionStorage.
type loginOutput struct {
	Session   string `json:"session"`
	ExpiresAt string `json:"expires_at"`
	Person    string `json:"person"`
	Actions   bool   `json:"actions"`
	Home      string `json:"home"`
}

// login exchanges a one-time token for a session secret. It answers only a
// POST from this dashboard's own origin (the guard), and only in the body:
// no other origin can read the answer, and no cookie is set.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var in loginInput
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil {
		writeErr(w, errs.Invalid("token", "required", "post the login token as {\"token\": …}"))
		return
	}
	g, ok := s.toks.redeem(in.Token, s.now())
	if !ok {
		writeErr(w, &errs.Error{Status: 401, Code: errs.Unauthorized, Message: "This login link is unknown, used or expired. Run `cairn ui` for a fresh one."})
		return
	}
	exp := s.now().Add(SessionTTL)
	g.Expires = exp.Unix()
	home := s.landing(r.Context(), g)
	writeJSON(w, 200, loginOutput{Session: sealSession(s.secret, g), ExpiresAt: exp.UTC().Format(time.RFC3339), Person: g.Person, Actions: g.AllowActions, Home: home})
}
