package httpserve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-mcp/cairn/host/clientsession"
)

func TestHTTPOptionsAreTheListenersOwn(t *testing.T) {
	t.Setenv("CAIRN_HTTP_SESSION_IDLE", "9m")
	if got := (Options{}).getenv()("CAIRN_HTTP_SESSION_IDLE"); got != "9m" {
		t.Errorf("without Env: %q, want the process environment", got)
	}
	o := Options{Env: map[string]string{"CAIRN_HTTP_ALLOWED_ORIGINS": "https://a.example"}}
	if got := o.getenv()("CAIRN_HTTP_SESSION_IDLE"); got != "" {
		t.Errorf("with Env: %q leaked from the process environment", got)
	}
	if hs, err := loadHTTPSettings(o.getenv()); err != nil || hs.sessionIdle != DefaultHTTPSessionIdle || len(hs.allowedOrigins) != 1 {
		t.Errorf("settings from Env: %+v %v", hs, err)
	}

	def := &clientsession.Settings{Project: "daemon"}
	var seen *clientsession.Settings
	probe := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = clientsession.From(r.Context(), def) })
	Options{}.withSession(probe).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
	if seen != def {
		t.Errorf("without Session: %+v, want the host's", seen)
	}
	own := &clientsession.Settings{Project: "web", Mode: "READONLY"}
	Options{Session: own}.withSession(probe).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
	if seen != own {
		t.Errorf("with Session: %+v, want the listener's", seen)
	}
}
