package config

import (
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// parseStore checks CAIRN_STORE: empty or "bbolt" is the default (returned
// as ""), a postgres:// or postgresql:// URL is kept as given. The value is
// never echoed back: a URL may carry a password.
func parseStore(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == "bbolt":
		return "", nil
	case strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://"):
		return v, nil
	}
	return "", errs.Newf(400, errs.ConfigInvalid, "CAIRN_STORE must be bbolt or a postgres://user:password@host/db URL")
}

// StoreKind names the store backend for messages: "bbolt" or "postgres".
func (s Settings) StoreKind() string {
	if s.Store == "" {
		return "bbolt"
	}
	return "postgres"
}
