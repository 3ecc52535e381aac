package cli

import (
	"context"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// routeLibraryLogs sends what libraries write through the standard log and
// log/slog packages (mcp-go's HTTP transport logs through slog.Default) to
// the process's hclog logger, so every stderr line has the configured
// format: CAIRN_LOG_FORMAT=json makes each one a JSON object.
func routeLibraryLogs(l hclog.Logger) {
	named := l.Named("lib")
	// slog.SetDefault first: it points the log package at slog (at INFO),
	// which SetOutput then replaces with a writer that reads the level.
	slog.SetDefault(slog.New(slogToHCLog{l: named}))
	log.SetFlags(0)
	log.SetOutput(named.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
}

// slogToHCLog is a log/slog handler writing to an hclog logger.
type slogToHCLog struct {
	l     hclog.Logger
	attrs []any
	group string
}

func (h slogToHCLog) Enabled(_ context.Context, level slog.Level) bool {
	return h.l.GetLevel() <= hclogLevel(level)
}

func (h slogToHCLog) Handle(_ context.Context, r slog.Record) error {
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, h.key(a.Key), a.Value.Resolve().Any())
		return true
	})
	h.l.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h slogToHCLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := h
	out.attrs = append([]any(nil), h.attrs...)
	for _, a := range attrs {
		out.attrs = append(out.attrs, h.key(a.Key), a.Value.Resolve().Any())
	}
	return out
}

func (h slogToHCLog) WithGroup(name string) slog.Handler {
	out := h
	out.group = h.key(name)
	return out
}

func (h slogToHCLog) key(k string) string {
	if h.group == "" {
		return k
	}
	return h.group + "." + k
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l >= slog.LevelError:
		return hclog.Error
	case l >= slog.LevelWarn:
		return hclog.Warn
	case l >= slog.LevelInfo:
		return hclog.Info
	default:
		return hclog.Debug
	}
}
