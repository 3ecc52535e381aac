package admin

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

func TestSettings(t *testing.T) {
	o, h, err := settings(map[string]string{"usage_threshold": "90%", "webhook_hold_retention": "48h"})
	if err != nil || o.UsageThreshold != 0.9 || h.HeldRetention != 48*time.Hour {
		t.Fatalf("%+v %+v %v", o, h, err)
	}
	for _, bad := range []map[string]string{
		{"usage_threshold": "0"},
		{"usage_threshold": "eighty"},
		{"webhook_hold_retention": "soon"},
		{"webhook_hold_retention": "1s"},
		{"key_prefix": "Bad-Prefix"},
	} {
		p := New()
		err := sdktest.Configure(context.Background(), p, sdk.Config{DataDir: t.TempDir(), Mode: "FULL", Settings: bad})
		if err == nil {
			_ = sdktest.Stop(context.Background(), p)
			t.Errorf("%v accepted", bad)
		}
	}
}
