package store

import (
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
)

// MigrationArea names the admin area's migrations in cairn_migrations.
const MigrationArea = "admin"

// Migrations are the admin area's PostgreSQL schema versions, applied in
// order at start. Append new steps; never edit an applied one.
var Migrations = []pgmigrate.Step{
	{Version: 1, Name: "buckets", SQL: kv.TableSQL(table)},
	{Version: 2, Name: "usage tables", SQL: usageTablesSQL},
	{Version: 3, Name: "delivery queue", SQL: queueTableSQL},
}
