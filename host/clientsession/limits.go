package clientsession

import (
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Default per-session limits (D21); CAIRN_MAX_MESSAGE and
// CAIRN_MAX_CONCURRENT_CALLS override them.
const (
	DefaultMaxMessage         = 8 << 20
	DefaultMaxConcurrentCalls = 16
)

// Limits are the per-session bounds of D21, the same in every transport.
type Limits struct {
	// MaxMessage bounds one JSON-RPC message, in bytes.
	MaxMessage int
	// MaxCalls bounds the tool calls one session runs at once.
	MaxCalls int
}

// LoadLimits reads CAIRN_MAX_MESSAGE (bytes, or with a KiB/MiB suffix) and
// CAIRN_MAX_CONCURRENT_CALLS.
func LoadLimits(getenv func(string) string) (Limits, error) {
	l := Limits{MaxMessage: DefaultMaxMessage, MaxCalls: DefaultMaxConcurrentCalls}
	if v := strings.TrimSpace(getenv("CAIRN_MAX_MESSAGE")); v != "" {
		n, err := ParseMessageLimit(v)
		if err != nil {
			return l, err
		}
		l.MaxMessage = n
	}
	if v := strings.TrimSpace(getenv("CAIRN_MAX_CONCURRENT_CALLS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return l, errs.Newf(400, errs.ConfigInvalid, "CAIRN_MAX_CONCURRENT_CALLS %q is not a whole number from 1 to 1024", v)
		}
		l.MaxCalls = n
	}
	return l, nil
}

// ParseMessageLimit parses a CAIRN_MAX_MESSAGE value.
func ParseMessageLimit(v string) (int, error) {
	n, err := parseBytes(strings.TrimSpace(v))
	if err != nil || n < 1024 {
		return 0, errs.Newf(400, errs.ConfigInvalid, "CAIRN_MAX_MESSAGE %q is not a size of at least 1024 bytes (examples: 8388608, 8MiB, 512KiB)", v)
	}
	return n, nil
}

func parseBytes(v string) (int, error) {
	mult := 1
	for suffix, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if s, ok := strings.CutSuffix(v, suffix); ok {
			v, mult = strings.TrimSpace(s), m
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > (1<<31)/mult {
		return 0, strconv.ErrRange
	}
	return n * mult, nil
}
