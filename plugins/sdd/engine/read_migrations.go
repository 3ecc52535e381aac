package engine

import (
	"context"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
)

// ReadMigrations reports the state store CAIRN_STORE names and, on
// PostgreSQL, its applied and pending migrations, without opening the
// store: nothing is created or applied. The state file has no migrations.
func ReadMigrations(ctx context.Context, setting string) (pgmigrate.StoreStatus, error) {
	return pgmigrate.ReadStore(ctx, setting, MigrationArea, "file", "sdd state store", Migrations)
}
