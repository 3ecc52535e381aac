package ui

import (
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestCreateArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		form        taskForm
		want        map[string]any
		field, rule string
	}{
		{"title only", taskForm{Title: "  Ship it "}, map[string]any{"title": "Ship it"}, "", ""},
		{"every field", taskForm{Title: "a", Description: "d", Priority: "high", Labels: "ui, forms,ui,, ", DependsOn: "t-1, T-2 T-2", Project: "shop"},
			map[string]any{"title": "a", "description": "d", "priority": "high", "labels": []string{"ui", "forms"}, "depends_on": []string{"T-1", "T-2"}, "project": "shop"}, "", ""},
		{"no title", taskForm{Title: " "}, nil, "title", "required"},
		{"a word among the dependencies", taskForm{Title: "a", DependsOn: "T-1, later"}, nil, "depends_on", "pattern"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, e := c.form.createArgs()
			if c.field != "" {
				if e == nil || e.Details["field"] != c.field || e.Details["constraint"] != c.rule {
					t.Fatalf("error %v, want field %s rule %s", e, c.field, c.rule)
				}
				return
			}
			if e != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("args %v (%v), want %v", got, e, c.want)
			}
		})
	}
}

func TestUpdateArgsSendOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	cur := editedTask{Title: "Ship it", Description: "old", Priority: "normal", Labels: []string{"a", "b"}, DependsOn: []string{"T-1"}, Status: "todo"}
	same := taskForm{Title: " Ship it", Description: "old\n", Priority: "normal", Labels: "a, b", DependsOn: "T-1", Status: "todo"}
	for _, c := range []struct {
		name  string
		form  func(f taskForm) taskForm
		want  map[string]any
		field string
	}{
		{"nothing changed", func(f taskForm) taskForm { return f }, nil, ""},
		{"priority", func(f taskForm) taskForm { f.Priority = "high"; return f }, map[string]any{"task_id": "T-9", "priority": "high"}, ""},
		{"labels cleared", func(f taskForm) taskForm { f.Labels = ""; return f }, map[string]any{"task_id": "T-9", "labels": []string{}}, ""},
		{"dependencies replaced", func(f taskForm) taskForm { f.DependsOn = "T-2,T-1"; return f }, map[string]any{"task_id": "T-9", "depends_on": []string{"T-2", "T-1"}}, ""},
		{"a move", func(f taskForm) taskForm { f.Status = "in_progress"; return f }, map[string]any{"task_id": "T-9", "status": "in_progress"}, ""},
		{"a block carries its reason", func(f taskForm) taskForm { f.Status = "blocked"; f.BlockedReason = " waits on legal "; return f },
			map[string]any{"task_id": "T-9", "status": "blocked", "blocked_reason": "waits on legal"}, ""},
		{"description", func(f taskForm) taskForm { f.Description = "new"; return f }, map[string]any{"task_id": "T-9", "description": "new"}, ""},
		{"title", func(f taskForm) taskForm { f.Title = "Ship it today"; return f }, map[string]any{"task_id": "T-9", "title": "Ship it today"}, ""},
		{"unknown status", func(f taskForm) taskForm { f.Status = "shipped"; return f }, nil, "status"},
		{"bad dependency", func(f taskForm) taskForm { f.DependsOn = "1"; return f }, nil, "depends_on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, e := c.form(same).updateArgs("T-9", cur)
			if c.field != "" {
				if e == nil || e.Details["field"] != c.field {
					t.Fatalf("error %v, want one naming %s", e, c.field)
				}
				return
			}
			if e != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("args %v (%v), want %v", got, e, c.want)
			}
		})
	}
}

// A read-only login's create and edit are refused before any tool call,
// naming the dashboard's switch (not a session mode); an acting login's
// create reaches task_create as the person.
func TestCreateAndEditNeedActions(t *testing.T) {
	t.Parallel()
	s, rec := startTest(t, Config{})
	post := func(c *http.Client, path, body string) (int, string) {
		req, _ := http.NewRequest("POST", base(s)+path, strings.NewReader(body))
		req.Header.Set("Origin", base(s))
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	reader := login(t, s, Grant{Person: "bob"})
	rec.reset()
	for _, path := range []string{"/api/tasks", "/api/task/T-1/edit", "/api/task/T-1/approve"} {
		code, body := post(reader, path, `{"title":"x","priority":"low"}`)
		if code != 403 || !strings.Contains(body, "cairn ui --allow-actions") || strings.Contains(body, "CAIRN_MODE") {
			t.Errorf("read-only %s: %d %s", path, code, body)
		}
	}
	rec.mu.Lock()
	if len(rec.names) != 0 {
		t.Errorf("a read-only login's form reached %v", rec.names)
	}
	rec.mu.Unlock()

	actor := login(t, s, Grant{Person: "alice", AllowActions: true})
	rec.reset()
	if code, body := post(actor, "/api/tasks", `{"title":"x","depends_on":"soon"}`); code != 400 || !strings.Contains(body, `"field":"depends_on"`) {
		t.Errorf("a word as a dependency: %d %s", code, body)
	}
	if code, _ := post(actor, "/api/tasks", `{"title":"Ship it"}`); code != 503 { // the recorder runs no area
		t.Errorf("create: %d, want the recorder's 503", code)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Equal(rec.names, []string{"task_create"}) || rec.calls[0].ID != "alice" || rec.calls[0].Source != PersonSource {
		t.Errorf("calls %v by %v, want one task_create by alice as a person", rec.names, rec.calls)
	}
}
