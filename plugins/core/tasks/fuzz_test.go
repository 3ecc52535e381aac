package tasks

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// checkTyped fails unless err is nil or an *errs.Error with a client status.
func checkTyped(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	e, ok := err.(*errs.Error)
	if !ok {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if e.Status != 400 && e.Status != 404 {
		t.Fatalf("unexpected status %d: %v", e.Status, e)
	}
}

func FuzzCreate(f *testing.F) {
	for _, seed := range []string{
		`{"title":"a","project":"alpha"}`,
		`{"title":"","project":"alpha"}`,
		`{"title":"x","project":"alpha","parent_id":"T-1","priority":"high","labels":["a","b"],"assignee":"me","estimate_hours":1000}`,
		`{"title":"x","project":"alpha","estimate_hours":-0.1}`,
		`{"title":"x","project":"Nope"}`,
		`{"title":"x","project":"gamma"}`,
		`{"title":"x","project":"alpha","parent_id":"T-0"}`,
		`{"title":"x","project":"alpha","parent_id":"T-18446744073709551615"}`,
		`{"title":"\ud800","project":"alpha"}`,
		`{"title":"x","project":"alpha","description":null,"labels":null}`,
	} {
		f.Add([]byte(seed))
	}
	fx := newFixture(f, "alpha")
	if _, err := fx.svc.Create("seed", CreateInput{Title: "parent", Project: "alpha"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in CreateInput
		if json.Unmarshal(data, &in) != nil {
			return
		}
		out, err := fx.svc.Create("fuzz", in)
		checkTyped(t, err)
		if err != nil {
			return
		}
		task, err := fx.svc.Get(GetInput{TaskID: out.TaskID})
		if err != nil {
			t.Fatalf("created task unreadable: %v", err)
		}
		if n := utf8.RuneCountInString(task.Title); n < 1 || n > MaxTitleLen || task.Status != StatusBacklog || len(task.Labels) > MaxLabels {
			t.Fatalf("invalid task stored: %+v", task)
		}
	})
}

func FuzzUpdateAndList(f *testing.F) {
	for _, seed := range []string{
		`{"task_id":"T-1","status":"todo"}`,
		`{"task_id":"T-1","status":"blocked","blocked_reason":"x"}`,
		`{"task_id":"T-1","progress":101}`,
		`{"task_id":"T-2","labels":[]}`,
		`{"task_id":"","status":"done"}`,
	} {
		f.Add([]byte(seed), []byte(`{"status":["todo"],"sort_by":"priority","limit":5,"search":"a b"}`))
	}
	f.Add([]byte(`{}`), []byte(`{"created_after":"2026-01-01","offset":-1}`))
	fx := newFixture(f, "alpha")
	if _, err := fx.svc.Create("seed", CreateInput{Title: "one", Project: "alpha"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, upd, list []byte) {
		var u UpdateInput
		if json.Unmarshal(upd, &u) == nil {
			_, err := fx.svc.Update("fuzz", u)
			checkTyped(t, err)
		}
		var l ListInput
		if json.Unmarshal(list, &l) == nil {
			out, err := fx.svc.List(l)
			checkTyped(t, err)
			if err == nil && (out.ReturnedCount != len(out.Tasks) || out.ReturnedCount > out.Limit) {
				t.Fatalf("inconsistent list %+v", out)
			}
		}
	})
}
