package pgmigrate

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Each CAIRN_STORE setting: the embedded store (no migrations), a setting
// that is neither (400), and a database that cannot be reached (503).
func TestReadStoreOfSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		setting, store string
		status         int
	}{
		{"", "file", 0},
		{"bbolt", "file", 0},
		{"mysql://x", "", 400},
		{"postgres://cairn@127.0.0.1:1/none?connect_timeout=1", "", 503},
		{"postgresql://cairn@127.0.0.1:1/none?connect_timeout=1", "", 503},
	} {
		got, err := ReadStore(context.Background(), tc.setting, "area", "file", "the store", nil)
		if tc.status != 0 {
			if e, ok := errs.As(err); !ok || e.Status != tc.status {
				t.Errorf("%q: error %v, want status %d", tc.setting, err, tc.status)
			}
			continue
		}
		if err != nil || got.Store != tc.store || got.Area != "area" || len(got.Pending) != 0 {
			t.Errorf("%q: %+v %v", tc.setting, got, err)
		}
	}
}
