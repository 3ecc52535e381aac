package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

func TestMatchPrefix(t *testing.T) {
	for _, tc := range []struct {
		in    []string
		typed string
		want  []string
	}{
		{[]string{"plan-phase", "execute-phase", "Plan-b"}, "pl", []string{"Plan-b", "plan-phase"}},
		{[]string{"a", "a", "b"}, "", []string{"a", "b"}},
		{[]string{"a"}, "z", nil},
	} {
		if got := MatchPrefix(tc.in, tc.typed); !slices.Equal(got, tc.want) {
			t.Errorf("MatchPrefix(%v, %q) = %v; want %v", tc.in, tc.typed, got, tc.want)
		}
	}
}

func TestComplete(t *testing.T) {
	p := New("demo", "1.0.0")
	var many []string
	for i := range 150 {
		many = append(many, fmt.Sprintf("v%03d", i))
	}
	p.CompleteWith(func(_ context.Context, r CompletionRequest) ([]string, bool, error) {
		switch r.Argument {
		case "phase":
			return []string{"1", "2"}, true, nil
		case "broken":
			return nil, true, errors.New("store closed")
		}
		return nil, false, nil
	})
	p.CompleteWith(func(_ context.Context, r CompletionRequest) ([]string, bool, error) {
		if r.Argument == "many" && r.Ref.RefType == "resource" {
			return many, true, nil
		}
		return nil, false, nil
	})
	s := &server{p: p}
	ctx := context.Background()
	for _, tc := range []struct {
		ref, arg  string
		wantLen   int
		wantMore  bool
		wantTotal int32
		wantErr   bool
	}{
		{"prompt", "phase", 2, false, 0, false},
		{"resource", "many", MaxCompletions, true, 150, false},
		{"prompt", "many", 0, false, 0, false},
		{"prompt", "unknown", 0, false, 0, false},
		{"prompt", "broken", 0, false, 0, true},
	} {
		resp, err := s.Complete(ctx, &pb.CompleteRequest{RefType: tc.ref, RefName: "x", Argument: tc.arg})
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s %s: no error", tc.ref, tc.arg)
			}
			continue
		}
		if err != nil || len(resp.Values) != tc.wantLen || resp.HasMore != tc.wantMore || resp.Total != tc.wantTotal {
			t.Errorf("%s %s = %d values, more %v, total %d, %v; want %d, %v, %d", tc.ref, tc.arg, len(resp.GetValues()), resp.GetHasMore(), resp.GetTotal(), err, tc.wantLen, tc.wantMore, tc.wantTotal)
		}
	}
}
