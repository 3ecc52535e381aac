// Package storetest holds what the admin area's tests share about its
// store.
package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// Moves are the two ways the admin state of a bbolt data dir reaches
// PostgreSQL: `cairn store copy`, and a database written by an earlier cairn
// (only its first applied migrations, every bucket in admin_kv) that the
// next open migrates.
func Moves(applied int) map[string]func(t *testing.T, dataDir, dsn string) {
	return map[string]func(t *testing.T, dataDir, dsn string){
		"store copy": func(t *testing.T, dataDir, dsn string) {
			if _, err := store.CopyToPostgres(context.Background(), dataDir, dsn); err != nil {
				t.Fatal(err)
			}
		},
		"migration of an older database": func(t *testing.T, dataDir, dsn string) {
			ctx := context.Background()
			pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			if _, err := pgmigrate.Apply(ctx, pool, store.MigrationArea, store.Migrations[:applied]); err != nil {
				t.Fatal(err)
			}
			db, err := kv.OpenBoltSource(filepath.Join(dataDir, store.FileName))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := kv.CopyBolt(ctx, db, pool, kv.PGConfig{Area: "admin", Table: "admin_kv", Lock: 1, Where: "test"}); err != nil {
				t.Fatal(err)
			}
		},
	}
}
