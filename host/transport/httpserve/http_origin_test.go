package httpserve

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHTTPOriginAndHostChecks(t *testing.T) {
	t.Parallel()
	allowed, err := ParseAllowedOrigins(" https://Agents.Example.com:443 , http://tool.example:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour, allowedOrigins: allowed})
	own := srv.URL // http://127.0.0.1:port
	port := own[strings.LastIndex(own, ":")+1:]
	for _, c := range []struct {
		name, origin, host string
		status             int
	}{
		{"no Origin (a program, not a page)", "", "", 200},
		{"the server's own origin", own, "", 200},
		{"own origin as localhost", "http://localhost:" + port, "localhost:" + port, 200},
		{"an allowed origin", "https://agents.example.com", "", 200},
		{"another allowed origin", "http://tool.example:8080", "", 200},
		{"a foreign origin", "http://evil.example", "", 403},
		{"own host, other port", "http://127.0.0.1:1", "", 403},
		{"allowed host, wrong scheme", "http://agents.example.com", "", 403},
		{"the null origin", "null", "", 403},
		{"a rebound Host", "", "evil.example:" + port, 403},
		{"a rebound Host and its own origin", "http://evil.example:" + port, "evil.example:" + port, 403},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
}

func TestParseAllowedOrigins(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "", want: ""},
		{in: "https://a.example", want: "https://a.example"},
		{in: "HTTPS://A.Example:443/", want: "https://a.example"},
		{in: "http://a.example:80,http://b.example:8080", want: "http://a.example http://b.example:8080"},
		{in: "http://[::1]:9000", want: "http://[::1]:9000"},
		{in: "*", bad: true},
		{in: "null", bad: true},
		{in: "a.example", bad: true},
		{in: "ftp://a.example", bad: true},
		{in: "https://a.example/path", bad: true},
		{in: "https://user@a.example", bad: true},
		{in: "https://a.example?q=1", bad: true},
	} {
		got, err := ParseAllowedOrigins(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q accepted as %v", c.in, got)
			} else if !strings.Contains(err.Error(), "CAIRN_HTTP_ALLOWED_ORIGINS") {
				t.Errorf("%q: error does not name the setting: %v", c.in, err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q = %v, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestLoadHTTPSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	s, err := loadHTTPSettings(get)
	if err != nil || s.sessionIdle != DefaultHTTPSessionIdle || len(s.allowedOrigins) != 0 {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	env["CAIRN_HTTP_SESSION_IDLE"] = "2h"
	if s, err := loadHTTPSettings(get); err != nil || s.sessionIdle != 2*time.Hour {
		t.Fatalf("2h: %+v %v", s, err)
	}
	for _, bad := range []string{"soon", "10ms", "-5m", "200h"} {
		env["CAIRN_HTTP_SESSION_IDLE"] = bad
		if _, err := loadHTTPSettings(get); err == nil || !strings.Contains(err.Error(), "CAIRN_HTTP_SESSION_IDLE") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A normalized origin is a fixed point, and only http(s) origins come out.
func FuzzNormalizeOrigin(f *testing.F) {
	for _, s := range []string{"http://a.example", "HTTPS://A:443/", "http://[::1]:80", "null", "http://a/b", "http://%zz", "http://a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := normalizeOrigin(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			t.Fatalf("%q normalized to %q", s, o)
		}
		again, err := normalizeOrigin(o)
		if err != nil || again != o {
			t.Fatalf("%q -> %q -> %q, %v", s, o, again, err)
		}
	})
}
