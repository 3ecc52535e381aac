package store

import (
	"context"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
)

// ReadMigrations reports the store CAIRN_STORE names and, on PostgreSQL,
// its applied and pending migrations, without opening the store: nothing
// is created or applied. A bbolt file upgrades itself when opened, so it
// has no migrations to report.
func ReadMigrations(ctx context.Context, setting string) (pgmigrate.StoreStatus, error) {
	return pgmigrate.ReadStore(ctx, setting, MigrationArea, "bbolt", "core store", Migrations)
}
