// Package imaging is Area D's image library: it loads images (by path inside
// the workspace root, or base64), checks and scales them to the hosted
// model's limits, keeps them in memory with an analysis cache, and asks the
// hosted model's Messages API for specialised analyses (general, ocr, chart,
// objects, face, scene, color, qa), comparisons and batch runs.
//
// It is plain Go with no MCP or gRPC: the vision plugin is a thin wrapper
// over it. Every outbound call goes through github.com/anthropics/anthropic-sdk-go
// built from an explicit Config, never from the process environment, so
// tests and embedders decide exactly where requests go.
package imaging

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Environment variables read by ConfigFromEnv (docs/decisions.md D20).
const (
	EnvAPIKey  = "ANTHROPIC_API_KEY"
	EnvBaseURL = "ANTHROPIC_BASE_URL"
	EnvModel   = "CAIRN_VISION_MODEL"
	// EnvTimeout optionally overrides the per-attempt request timeout
	// (a Go duration such as "90s").
	EnvTimeout = "CAIRN_VISION_TIMEOUT"
	// EnvMaxRetries optionally overrides the retry count (0 to 5).
	EnvMaxRetries = "CAIRN_VISION_MAX_RETRIES"
)

// Defaults for the hosted-model client.
const (
	// DefaultModel is a current vision- and computer-use-capable model
	// (docs/decisions.md D29), named by the SDK's own constant; override it with
	// CAIRN_VISION_MODEL.
	DefaultModel = string(anthropic.ModelClaudeSonnet5_5)
	// DefaultMaxRetries: the SDK retries 408, 409, 429 and 5xx with
	// exponential backoff (honouring retry-after); two retries ride out a
	// brief overload without making an agent wait minutes.
	DefaultMaxRetries = 2
	// MaxMaxRetries bounds the retry setting.
	MaxMaxRetries = 5
	// DefaultRequestTimeout bounds one attempt; an analysis reply of a few
	// hundred tokens takes seconds, so a minute is generous yet fails a hung
	// connection long before an agent gives up.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultMaxTokens bounds the reply of one analysis.
	DefaultMaxTokens = 2048
)

// Config configures an Engine. Zero fields take the defaults above.
type Config struct {
	// APIKey is sent in the x-api-key header. Empty: analysis calls fail
	// with ERR_NOT_CONFIGURED (loading images still works).
	APIKey string
	// BaseURL of the Messages API; empty means the SDK's production URL.
	BaseURL string
	// Model used for every analysis.
	Model string
	// MaxRetries per call (0 disables retries). Negative means default.
	MaxRetries int
	// RequestTimeout per attempt.
	RequestTimeout time.Duration
	// MaxTokens per reply.
	MaxTokens int
	// HTTPClient replaces the default HTTP client (tests, proxies).
	HTTPClient *http.Client
	// Root is the workspace root; image paths must stay inside it.
	Root string
	// Limits on images; zero fields take DefaultLimits.
	Limits Limits
	// Logger receives debug lines; nil discards them. The API key is
	// never logged.
	Logger hclog.Logger
}

// ConfigFromEnv reads the D20 variables through getenv (os.Getenv in the
// plugin; a map in tests). It refuses malformed optional settings.
func ConfigFromEnv(getenv func(string) string, root string) (Config, error) {
	cfg := Config{
		APIKey:     strings.TrimSpace(getenv(EnvAPIKey)),
		BaseURL:    strings.TrimSpace(getenv(EnvBaseURL)),
		Model:      strings.TrimSpace(getenv(EnvModel)),
		Root:       root,
		MaxRetries: -1,
	}
	if v := strings.TrimSpace(getenv(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return cfg, errs.Newf(400, errs.ConfigInvalid, "%s=%q: want a duration between 1s and 10m such as 90s", EnvTimeout, v)
		}
		cfg.RequestTimeout = d
	}
	if v := strings.TrimSpace(getenv(EnvMaxRetries)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxMaxRetries {
			return cfg, errs.Newf(400, errs.ConfigInvalid, "%s=%q: want an integer 0 to %d", EnvMaxRetries, v, MaxMaxRetries)
		}
		cfg.MaxRetries = n
	}
	return cfg, nil
}

func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetries > MaxMaxRetries {
		c.MaxRetries = MaxMaxRetries
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	c.Limits = c.Limits.withDefaults()
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Configured reports whether hosted-model calls can be made.
func (c Config) Configured() bool { return c.APIKey != "" }

// NotConfiguredError is the error every hosted-model call returns without
// an API key.
func NotConfiguredError() *errs.Error {
	return errs.Newf(503, errs.NotConfigured,
		"vision analysis needs the hosted model's API key: set %s in the environment cairn runs in (and optionally %s, %s), then restart cairn",
		EnvAPIKey, EnvBaseURL, EnvModel).With("variable", EnvAPIKey)
}

// ClientOptions returns the anthropic-sdk-go options for cfg. It starts
// from option.WithoutEnvironmentDefaults so nothing in the process
// environment (ANTHROPIC_*, profiles) changes where requests go or which
// credential they carry.
func ClientOptions(c Config) []option.RequestOption {
	c = c.withDefaults()
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(c.APIKey),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(c.RequestTimeout),
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	if c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(c.HTTPClient))
	} else {
		// The SDK's per-attempt timeout covers the request; this client
		// only adds sane connection-level limits.
		opts = append(opts, option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport}))
	}
	return opts
}

// NewClient builds the Messages API client for cfg.
func NewClient(c Config) anthropic.Client {
	return anthropic.NewClient(ClientOptions(c)...)
}

// UpstreamError turns an SDK error into a typed error that says what to do.
// It never includes request headers, so the API key cannot leak into it.
func UpstreamError(err error, what string) *errs.Error {
	if err == nil {
		return nil
	}
	if e, ok := errs.As(err); ok {
		return e
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		msg := strings.TrimSpace(apiErr.RawJSON())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		switch status {
		case 401, 403:
			return errs.Newf(502, errs.UpstreamFailed, "%s: the hosted model refused the credentials (HTTP %d); check %s", what, status, EnvAPIKey).With("upstream_status", status)
		case 404:
			return errs.Newf(502, errs.UpstreamFailed, "%s: the hosted model answered 404 (unknown model or URL); check %s and %s: %s", what, EnvModel, EnvBaseURL, msg).With("upstream_status", status)
		case 429:
			return errs.Newf(429, errs.RateLimited, "%s: the hosted model is rate limiting after retries; wait and try again", what).With("upstream_status", status)
		case 400, 413, 422:
			return errs.Newf(502, errs.UpstreamFailed, "%s: the hosted model rejected the request (HTTP %d): %s", what, status, msg).With("upstream_status", status)
		default:
			return errs.Newf(502, errs.UpstreamFailed, "%s: the hosted model failed (HTTP %d) after retries; try again later: %s", what, status, msg).With("upstream_status", status)
		}
	}
	return errs.Newf(502, errs.UpstreamFailed, "%s: cannot reach the hosted model (%v); check %s and the network", what, err, EnvBaseURL)
}

// String describes the configuration without the key.
func (c Config) String() string {
	c = c.withDefaults()
	base := c.BaseURL
	if base == "" {
		base = "(default)"
	}
	return fmt.Sprintf("model=%s base_url=%s key_set=%t retries=%d timeout=%s", c.Model, base, c.APIKey != "", c.MaxRetries, c.RequestTimeout)
}
