package sdd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Started with migrations=read the area opens no state store (no state
// file, no data dir), its tools say so, and sdd_store_migrations answers.
func TestMigrationsReadOpensNoStore(t *testing.T) {
	t.Setenv("CAIRN_STORE", "")
	root := t.TempDir()
	dir := filepath.Join(root, ".cairn", "data")
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: root, DataDir: dir, Mode: "FULL", Settings: map[string]string{pgmigrate.ReadOnlySetting: pgmigrate.ReadOnly}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data dir exists (%v): the state store was opened", err)
	}
	if r := invoke(t, p, "sdd_vitals", "{}"); r.Status != 503 {
		t.Fatalf("sdd_vitals without a store: %d %v", r.Status, r.Err)
	}
	r := invoke(t, p, "sdd_store_migrations", "{}")
	var st pgmigrate.StoreStatus
	if r.Err != nil || json.Unmarshal(r.Output, &st) != nil || st.Store != "file" || st.Area != engine.MigrationArea {
		t.Fatalf("sdd_store_migrations: %s %v", r.Output, r.Err)
	}
}
