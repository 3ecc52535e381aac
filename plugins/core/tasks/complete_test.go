package tasks

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"slices"
	"testing"
)

func TestCompleteID(t *testing.T) { pgtest.EachStore(t, testCompleteID) }

func testCompleteID(t *testing.T) {
	f := newFixture(t, "app")
	for _, title := range []string{"Fix auth timeout", "Write docs", "Authorize admins", "Über-cache warmup"} {
		f.create(t, CreateInput{Title: title, Project: "app"})
	}
	for i := 0; i < 8; i++ {
		f.create(t, CreateInput{Title: fmt.Sprintf("Filler %d", i), Project: "app"})
	}
	ids := func(ms []IDMatch) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.TaskID)
		}
		return out
	}
	for _, tc := range []struct {
		typed string
		limit int
		want  []string
	}{
		{"T-1", 10, []string{"T-12", "T-11", "T-10", "T-1"}},
		{"t-2", 10, []string{"T-2"}},
		{"auth", 10, []string{"T-3", "T-1"}},
		{"AUTH", 10, []string{"T-3", "T-1"}},
		{"über", 10, []string{"T-4"}},
		{"cache", 10, []string{"T-4"}},
		{"thout", 10, nil},
		{"", 3, []string{"T-12", "T-11", "T-10"}},
		{"T-1", 2, []string{"T-12", "T-11"}},
	} {
		got, err := f.svc.CompleteID(tc.typed, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("CompleteID(%q, %d) = %v; want %v", tc.typed, tc.limit, ids(got), tc.want)
		}
	}
}
