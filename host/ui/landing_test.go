package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// projectsBackend answers task_list from a fixed set of tasks, each in a
// project, the last one the most recently updated.
type projectsBackend struct {
	*recorder
	projects []string // one task each, oldest first
}

func (b *projectsBackend) Call(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	if name != "task_list" {
		return b.recorder.Call(ctx, name, args, c)
	}
	var in struct {
		Project string `json:"project"`
	}
	_ = json.Unmarshal(args, &in)
	type item struct {
		Project string `json:"project"`
	}
	var hits []item
	for i := len(b.projects) - 1; i >= 0; i-- { // newest first
		if in.Project == "" || in.Project == b.projects[i] {
			hits = append(hits, item{b.projects[i]})
		}
	}
	out, _ := json.Marshal(map[string]any{"tasks": hits[:min(1, len(hits))], "total_count": len(hits)})
	return &seam.Result{Output: out}
}

// A login lands on the work: the session's project when it has tasks, else
// the project changed last, else every project (docs/decisions.md D25).
func TestLoginLandsOnTheWork(t *testing.T) {
	for _, tc := range []struct {
		name     string
		projects []string
		grant    string
		want     string
	}{
		{"own project has tasks", []string{"web", "board"}, "web", "/board?project=web"},
		{"own project empty", []string{"api", "board"}, "wt-dash", "/board?from=wt-dash&project=board"},
		{"no project in the grant", []string{"board", "api"}, "", "/board?project=api"},
		{"no tasks anywhere", nil, "wt-dash", "/board?from=wt-dash"},
		{"no tasks, no project", nil, "", "/board"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &projectsBackend{recorder: newRecorder(), projects: tc.projects}
			s, err := Start(be, Config{DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Stop)
			code, out := exchange(t, s, s.LoginURL(Grant{Person: "alice", Project: tc.grant}), base(s))
			if code != 200 || out.Home != tc.want {
				t.Fatalf("login: %d, home %q, want %q", code, out.Home, tc.want)
			}
		})
	}
}

// The board a login passed over says so, and where it landed instead.
func TestBoardSaysWhereItLanded(t *testing.T) {
	s, _ := startTest(t, Config{})
	c := login(t, s, Grant{Person: "alice"})
	body := getPage(t, c, base(s)+"/view/board?project=board&from=wt-dash")
	for _, want := range []string{"data-landing", "<strong>wt-dash</strong> has no tasks yet", "Showing <strong>board</strong>"} {
		if !strings.Contains(body, want) {
			t.Errorf("board page lacks %q:\n%s", want, body)
		}
	}
}
