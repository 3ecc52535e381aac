package store

import (
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// SettingEnv is the environment variable naming the store backend.
const SettingEnv = "CAIRN_STORE"

// FileName is the core store's file name inside the data dir.
const FileName = "core.db"

// OpenFor opens the store CAIRN_STORE names (docs/decisions.md D26): "" or
// "bbolt" is core.db in dataDir, a postgres:// or postgresql:// URL is
// that database.
func OpenFor(dataDir, setting string) (*Store, error) {
	switch {
	case setting == "" || setting == "bbolt":
		return Open(filepath.Join(dataDir, FileName), Options{})
	case pgmigrate.IsPostgres(setting):
		return OpenPostgres(setting)
	default:
		return nil, errs.Invalidf("CAIRN_STORE", "enum", "CAIRN_STORE must be bbolt or a postgres:// URL")
	}
}
