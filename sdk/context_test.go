package sdk

import (
	"context"
	"testing"
)

func TestContextValues(t *testing.T) {
	ctx := context.Background()
	if c := CallerFrom(ctx); c.ID != "unknown" || c.Source != "unknown" {
		t.Fatalf("CallerFrom(empty) = %+v", c)
	}
	ctx = WithCaller(ctx, Caller{ID: "alice", Source: "env", Project: "web"})
	if c := CallerFrom(ctx); c.ID != "alice" || c.Project != "web" {
		t.Fatalf("CallerFrom = %+v", c)
	}
	if IdempotencyOf(ctx).Keyed() {
		t.Fatal("IdempotencyOf without a key is not zero")
	}
	ctx = WithIdempotency(ctx, Idempotency{Key: "s1:7", Replay: true})
	if v := IdempotencyOf(ctx); v.Key != "s1:7" || !v.Replay {
		t.Fatalf("IdempotencyOf = %+v", v)
	}
	var got []float64
	ReportProgress(ctx, 1, 2, "no listener") // a no-op, not a panic
	ctx = WithProgress(ctx, func(p, total float64, _ string) { got = append(got, p, total) })
	ReportProgress(ctx, 1, 2, "half")
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("progress = %v", got)
	}
	if RequestID(withRequestID(ctx, "r-1")) != "r-1" {
		t.Fatal("RequestID")
	}
}
