package admin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Started with migrations=read the area opens no store (no admin.db, no
// data dir), its tools say so, and admin_store_migrations answers the
// local operator only.
func TestMigrationsReadOpensNoStore(t *testing.T) {
	t.Setenv(store.SettingEnv, "")
	dir := filepath.Join(t.TempDir(), "data")
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{DataDir: dir, Mode: "FULL", Settings: map[string]string{pgmigrate.ReadOnlySetting: pgmigrate.ReadOnly}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data dir exists (%v): the store was opened", err)
	}
	if _, res := invoke(t, p, "admin_key_list", map[string]any{}); res.Status != 503 {
		t.Fatalf("admin_key_list without a store: %d %v", res.Status, res.Err)
	}
	key := sdk.WithCaller(context.Background(), sdk.Caller{ID: "carol", Source: "api_key"})
	if res := sdktest.Invoke(key, p, "admin_store_migrations", []byte("{}")); res.Status != 403 {
		t.Fatalf("an HTTP caller asked for the migrations: %d %v", res.Status, res.Err)
	}
	res := sdktest.Invoke(context.Background(), p, "admin_store_migrations", []byte("{}"))
	var st pgmigrate.StoreStatus
	if res.Err != nil || json.Unmarshal(res.Output, &st) != nil || st.Store != "bbolt" || st.Area != store.MigrationArea {
		t.Fatalf("operator: %s %v", res.Output, res.Err)
	}
}
