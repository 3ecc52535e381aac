package sdk

import (
	"context"
	"reflect"
	"testing"
)

func TestLogSendsWhatTheClientWants(t *testing.T) {
	type line struct {
		level string
		data  any
	}
	for _, tc := range []struct {
		name       string
		min        string
		level, msg string
		data       map[string]any
		want       []line
	}{
		{"at the level", LogInfo, LogInfo, "hi", nil, []line{{LogInfo, "hi"}}},
		{"above the level", LogInfo, LogError, "bad", nil, []line{{LogError, "bad"}}},
		{"below the level", LogWarning, LogInfo, "chatter", nil, nil},
		{"fields beside the message", LogDebug, LogDebug, "step", map[string]any{"n": 2}, []line{{LogDebug, map[string]any{"message": "step", "n": 2}}}},
		{"unknown level counts as info", LogInfo, "loud", "x", nil, []line{{LogInfo, "x"}}},
		{"unknown level below the client's", LogNotice, "loud", "x", nil, nil},
		{"client wants none", "", LogEmergency, "x", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []line
			ctx := WithLog(context.Background(), tc.min, func(level string, data any) { got = append(got, line{level, data}) })
			Log(ctx, tc.level, tc.msg, tc.data)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("sent %v, want %v", got, tc.want)
			}
		})
	}
	Log(context.Background(), LogError, "no call in ctx: nothing to do", nil)
}
