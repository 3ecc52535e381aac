package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"code.dny.dev/ssrf"
)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// ValidationResult is validateWebhookUrl's result.
type ValidationResult struct {
	Valid bool   `json:"valid"`
	Error string `json:"error,omitempty"`
}

// Resolver looks up a host's addresses; net.DefaultResolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// URLValidator checks webhook URLs. In production (Development false)
// private, loopback, link-local and other special-purpose addresses are
// refused, both for IP literals and for every address a name resolves to.
type URLValidator struct {
	Development bool
	Resolver    Resolver
	guard       *ssrf.Guardian
}

// NewURLValidator returns a validator; resolver nil means the system's.
func NewURLValidator(development bool, resolver Resolver) *URLValidator {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &URLValidator{Development: development, Resolver: resolver, guard: ssrf.New(ssrf.WithAnyPort())}
}

// ValidateWebhookURL is validateWebhookUrl with the default (production
// unless CAIRN_ENV=development) rules and the system resolver.
func ValidateWebhookURL(rawURL string) ValidationResult {
	return NewURLValidator(IsDevelopment(), nil).Validate(context.Background(), rawURL)
}

// ParseWebhookURL checks the URL's form only (no address rules): http or
// https, a host, no credentials, at most MaxURLLength characters.
func ParseWebhookURL(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		return nil, errors.New("url is required")
	}
	if len(rawURL) > MaxURLLength {
		return nil, fmt.Errorf("url must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("url is not a valid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q must be an absolute http or https URL, as in https://hooks.example.com/cairn", u.Redacted())
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, fmt.Errorf("url %q must name a host, as in https://hooks.example.com/cairn", u.Redacted())
	}
	if u.User != nil {
		return nil, errors.New("url must not carry credentials; authenticate receivers with the webhook signature")
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return nil, fmt.Errorf("url has an invalid port %q", p)
		}
	}
	return u, nil
}

func parsePort(p string) (int, error) {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, errors.New("out of range")
		}
	}
	return n, nil
}

// Validate checks a URL's form and, outside development, its destination.
func (v *URLValidator) Validate(ctx context.Context, rawURL string) ValidationResult {
	u, err := ParseWebhookURL(rawURL)
	if err != nil {
		return ValidationResult{Error: err.Error()}
	}
	if v.Development {
		return ValidationResult{Valid: true}
	}
	if err := v.checkHost(ctx, u.Hostname()); err != nil {
		return ValidationResult{Error: err.Error()}
	}
	return ValidationResult{Valid: true}
}

func (v *URLValidator) checkHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return v.checkAddr(host, ip)
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return fmt.Errorf("url host %s is a loopback name; webhooks to private, loopback or link-local addresses are allowed only with CAIRN_ENV=development", host)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := v.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("url host %s does not resolve (%v); a webhook needs a reachable public host", host, err)
	}
	for _, a := range addrs {
		if err := v.checkAddr(host, a); err != nil {
			return err
		}
	}
	return nil
}

func (v *URLValidator) checkAddr(host string, ip netip.Addr) error {
	if err := v.guard.SafeAddr(ip.Unmap().WithZone("")); err != nil {
		what := host
		if what != ip.String() {
			what = fmt.Sprintf("%s (%s)", host, ip)
		}
		return fmt.Errorf("url host %s is a private, loopback, link-local or otherwise non-public address; such webhooks are allowed only with CAIRN_ENV=development", what)
	}
	return nil
}

// ErrRedirect marks a delivery answered with a redirect, which is never
// followed (the target could be an address validation refused).
var ErrRedirect = errors.New("redirect not followed")

// NewHTTPClient returns the delivery client: no proxy (a proxy would dial
// on our behalf, past the guard), no redirects, and — outside development
// — a dialer that checks every address it connects to, so a name that
// resolved to a public address at registration and to a private one now
// (DNS rebinding) is still refused.
func NewHTTPClient(development bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !development {
		d.Control = ssrf.New(ssrf.WithAnyPort()).Safe
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
