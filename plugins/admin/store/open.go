package store

import (
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// SettingEnv is the environment variable naming the store backend.
const SettingEnv = "CAIRN_STORE"

// OpenFor opens the store CAIRN_STORE names (docs/decisions.md D26): "" or
// "bbolt" is the file in dataDir, a postgres:// or postgresql:// URL is
// that database.
//
// admin.db is listed in the data dir's inventory of held stores once open,
// so that the file missing or empty later fails the start (Open refuses
// it) instead of starting an empty store (docs/decisions.md D42).
// PostgreSQL is no file of the data dir and is not listed.
func OpenFor(dataDir, setting string) (*Store, error) {
	switch {
	case setting == "" || setting == "bbolt":
		st, err := Open(filepath.Join(dataDir, FileName), Options{})
		if err != nil {
			return nil, err
		}
		if err := heldstores.Record(dataDir, FileName); err != nil {
			st.Close()
			return nil, errs.Newf(500, errs.InitFailed, "cannot list admin.db as held: %v; check the permissions of %s", err, dataDir)
		}
		return st, nil
	case pgmigrate.IsPostgres(setting):
		return OpenPostgres(setting, Options{})
	default:
		return nil, errs.Invalidf("CAIRN_STORE", "enum", "CAIRN_STORE must be bbolt or a postgres:// URL")
	}
}
