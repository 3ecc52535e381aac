package engine

import (
	"context"
	"strings"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ReadMigrations reports the state store CAIRN_STORE names and, on
// PostgreSQL, its applied and pending migrations, without opening the
// store: nothing is created or applied. The state file has no migrations.
func ReadMigrations(ctx context.Context, setting string) (pgmigrate.StoreStatus, error) {
	out := pgmigrate.StoreStatus{Store: "file", Status: pgmigrate.Status{Area: MigrationArea}}
	switch {
	case setting == "" || setting == "bbolt":
		return out, nil
	case !strings.HasPrefix(setting, "postgres://") && !strings.HasPrefix(setting, "postgresql://"):
		return out, errs.Invalidf("CAIRN_STORE", "enum", "CAIRN_STORE must be bbolt or a postgres:// URL")
	}
	st, err := pgmigrate.ReadAt(ctx, setting, MigrationArea, Migrations)
	if err != nil {
		return out, errs.Newf(503, errs.Unavailable, "sdd state store at %s: %v", pgmigrate.Redact(setting), err)
	}
	out.Store, out.Status = "postgres", st
	return out, nil
}
