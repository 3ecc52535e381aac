package tasks

import (
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// testClock starts at a fixed instant and advances one second per reading,
// so every write gets a distinct, predictable time.
type testClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock() *testClock {
	return &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), step: time.Second}
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *testClock) freeze() {
	c.mu.Lock()
	c.step = 0
	c.mu.Unlock()
}

type event struct {
	typ  string
	data map[string]any
}

type fixture struct {
	svc    *Service
	st     *store.Store
	clock  *testClock
	mu     sync.Mutex
	events []event
}

func (f *fixture) takeEvents() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.events
	f.events = nil
	return e
}

func newFixture(t testing.TB, projects ...string) *fixture {
	t.Helper()
	// Under pgtest.EachStore's postgres run every fixture gets a database
	// of its own, as every bbolt fixture gets its own directory.
	setting := os.Getenv(store.SettingEnv)
	if setting != "" {
		setting = pgtest.DSN(t)
	}
	st, err := store.OpenFor(t.TempDir(), setting)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{st: st, clock: newClock()}
	f.svc = New(st, Config{
		Clock: f.clock.now,
		Publish: func(typ string, data any) {
			f.mu.Lock()
			f.events = append(f.events, event{typ, data.(map[string]any)})
			f.mu.Unlock()
		},
	})
	for _, p := range projects {
		if _, err := f.svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) create(t testing.TB, in CreateInput) CreateOutput {
	t.Helper()
	out, err := f.svc.Create("agent-1", in)
	if err != nil {
		t.Fatalf("Create(%+v): %v", in, err)
	}
	return out
}

func (f *fixture) update(t testing.TB, in UpdateInput) UpdateOutput {
	t.Helper()
	out, err := f.svc.Update("agent-2", in)
	if err != nil {
		t.Fatalf("Update(%+v): %v", in, err)
	}
	return out
}

func (f *fixture) get(t testing.TB, id string) Task {
	t.Helper()
	task, err := f.svc.Get(GetInput{TaskID: id})
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return task
}

// wantErr asserts err is an *errs.Error with the code, status and (when
// field is non-empty) details.field and details.constraint given.
func wantErr(t testing.TB, err error, status int, code, field, constraint string) *errs.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %s field=%s", status, code, field)
	}
	e, ok := err.(*errs.Error)
	if !ok {
		t.Fatalf("error %T (%v), want *errs.Error", err, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("got %d %s (%s), want %d %s", e.Status, e.Code, e.Message, status, code)
	}
	if field != "" && e.Details["field"] != field {
		t.Fatalf("details.field %v, want %s (%s)", e.Details["field"], field, e.Message)
	}
	if constraint != "" && e.Details["constraint"] != constraint {
		t.Fatalf("details.constraint %v, want %s (%s)", e.Details["constraint"], constraint, e.Message)
	}
	if e.Message == "" {
		t.Fatal("empty message")
	}
	return e
}

// pathTo lists the updates that bring a fresh backlog task to status s.
func pathTo(s string) []UpdateInput {
	st := func(v string) UpdateInput { return UpdateInput{Status: ptr(v)} }
	switch s {
	case StatusTodo:
		return []UpdateInput{st(StatusTodo)}
	case StatusInProgress:
		return []UpdateInput{st(StatusTodo), st(StatusInProgress)}
	case StatusBlocked:
		return []UpdateInput{st(StatusTodo), {Status: ptr(StatusBlocked), BlockedReason: ptr("waiting on review of T-0")}}
	case StatusReview:
		return []UpdateInput{st(StatusTodo), st(StatusInProgress), st(StatusReview)}
	case StatusDone:
		return []UpdateInput{st(StatusTodo), st(StatusInProgress), st(StatusReview), st(StatusDone)}
	case StatusCancelled:
		return []UpdateInput{st(StatusCancelled)}
	}
	return nil
}

func (f *fixture) taskIn(t testing.TB, project, status string) string {
	t.Helper()
	id := f.create(t, CreateInput{Title: "task in " + status, Project: project}).TaskID
	for _, u := range pathTo(status) {
		u.TaskID = id
		f.update(t, u)
	}
	return id
}
