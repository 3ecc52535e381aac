package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// boardBackend answers task_list with a page of n tasks and task_get with
// labels, sub-tasks and dependencies derived from the task number.
type boardBackend struct {
	*recorder
	gets atomic.Int32
}

func (b *boardBackend) Call(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	var in struct {
		TaskID string `json:"task_id"`
		Limit  int    `json:"limit"`
		Search string `json:"search"`
	}
	_ = json.Unmarshal(args, &in)
	switch name {
	case "task_list":
		var rows []string
		for i := 1; i <= in.Limit+10; i++ { // more than asked: the page is cut
			rows = append(rows, fmt.Sprintf(`{"task_id":"T-%d","title":"t","status":"todo","priority":"normal","progress":0,"assignee":"unassigned"}`, i))
		}
		capped := ""
		if in.Search != "" { // a common word: the tool stops counting
			capped = `,"total_capped":true`
		}
		return &seam.Result{Output: json.RawMessage(`{"tasks":[` + strings.Join(rows, ",") + `],"total_count":999` + capped + `}`)}
	case "task_get":
		b.gets.Add(1)
		if in.TaskID == "T-3" {
			return b.recorder.Call(ctx, name, args, c) // vanished meanwhile
		}
		return &seam.Result{Output: json.RawMessage(`{"task_id":"` + in.TaskID + `","labels":["parser"],"blocked_reason":"","dependents":["T-90","T-91"],"depends_on":["T-80"]}`)}
	}
	return b.recorder.Call(ctx, name, args, c)
}

func TestColumnPageCardsCarryLabelsAndCounts(t *testing.T) {
	be := &boardBackend{recorder: newRecorder()}
	s, err := Start(be, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	c := login(t, s, Grant{Person: "alice"})
	res, err := c.Get(base(s) + "/api/tasks?status=todo&limit=5")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var page struct {
		Tasks []map[string]any `json:"tasks"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != 200 {
		t.Fatalf("%d %v", res.StatusCode, err)
	}
	if len(page.Tasks) != 5 || be.gets.Load() != 5 {
		t.Fatalf("%d cards from %d task_get calls, want 5 and 5", len(page.Tasks), be.gets.Load())
	}
	for _, card := range page.Tasks {
		if card["task_id"] == "T-3" {
			if _, ok := card["labels"]; ok {
				t.Errorf("a task task_get cannot find still got details: %v", card)
			}
			continue
		}
		if fmt.Sprint(card["labels"]) != "[parser]" || card["subtask_count"] != 2.0 || card["depends_on_count"] != 1.0 {
			t.Errorf("card %v", card)
		}
	}
}

// A column whose search count the tool capped says so, so the board shows
// "more than" the count and keeps paging (docs/decisions.md D9).
func TestColumnPageSaysWhenItsCountIsALowerBound(t *testing.T) {
	be := &boardBackend{recorder: newRecorder()}
	s, err := Start(be, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	c := login(t, s, Grant{Person: "alice"})
	for q, want := range map[string]bool{"": false, "&q=common": true} {
		res, err := c.Get(base(s) + "/api/tasks?limit=5" + q)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			TotalCount  int  `json:"total_count"`
			TotalCapped bool `json:"total_capped"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil || page.TotalCount != 999 || page.TotalCapped != want {
			t.Fatalf("query %q: %+v %v, want total_capped %v", q, page, err, want)
		}
	}
}
