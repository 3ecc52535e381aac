package httpserve

import (
	"net/http"
	"os"

	"github.com/cairn-mcp/cairn/host/clientsession"
)

// Options are one HTTP listener's own settings. The in-process server
// of `cairn serve --http` has one listener with the host's settings; the
// shared daemon of a data dir opens a listener for each `cairn serve --http`
// that asks, with that command's options (docs/decisions.md D21).
type Options struct {
	// Auth checks the API key of every request; nil serves without keys
	// (loopback addresses only).
	Auth Authenticator
	// Session, when set, is the settings of every session on this
	// listener: the CAIRN_AGENT_ID, CAIRN_PROJECT, CAIRN_TOOLSETS and
	// CAIRN_MODE of the command that opened it, not the daemon's. Nil: the
	// host's own settings.
	Session *clientsession.Settings
	// Env, when not nil, is the listener's environment for its HTTP
	// settings (CAIRN_HTTP_*): the command's that opened it, not the
	// daemon's. Nil: this process's environment.
	Env map[string]string
}

// getenv reads the listener's HTTP settings.
func (o Options) getenv() func(string) string {
	if o.Env == nil {
		return os.Getenv
	}
	return func(k string) string { return o.Env[k] }
}

// EnvPrefix begins the names of the variables that are an HTTP
// listener's own settings.
const EnvPrefix = "CAIRN_HTTP_"

// withSession gives every request on the listener its session settings.
func (o Options) withSession(next http.Handler) http.Handler {
	if o.Session == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(clientsession.With(r.Context(), o.Session)))
	})
}
