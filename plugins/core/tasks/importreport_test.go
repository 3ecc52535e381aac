package tasks

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/importedtext"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// trailTexts records what an import hands the trail hook, by task number,
// as the audit package would append it (that package's own tests, and the
// core area's, check the records it makes).
type trailTexts struct {
	mu   sync.Mutex
	byID map[uint64][]importedText
}

func (tt *trailTexts) hook(_ kv.Tx, num uint64, field, text, _ string) (string, []map[string]any, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.byID[num] = append(tt.byID[num], importedText{Field: field, Text: text})
	return "thought.recorded", []map[string]any{{"task": num, "field": field}}, nil
}

// withTrail is a fixture whose service hands imported texts to a trail.
func withTrail(t *testing.T) (*fixture, *trailTexts) {
	t.Helper()
	f := newFixture(t, "imp")
	tt := &trailTexts{byID: map[uint64][]importedText{}}
	_ = f.svc.Close()
	f.svc = New(f.st, Config{Clock: f.clock.now, ImportedText: tt.hook})
	t.Cleanup(func() { _ = f.svc.Close() })
	return f, tt
}

func tm(key string, line int, f ...func(*importer.Task)) importer.Task {
	t := importer.Task{Key: key, Source: key, Where: importer.Where{File: "tasks.json", Line: line}, Title: "task " + key}
	for _, g := range f {
		g(&t)
	}
	return t
}

func dependsOn(keys ...string) func(*importer.Task) {
	return func(t *importer.Task) { t.DependsOn = keys }
}

// Each rule of a lenient import (docs/decisions.md D41): what it imports,
// the report's entry, and that strict refuses the same input whole.
func TestImportReportsWhatItMends(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("long text ", 1800) // 18,000 characters
	for _, c := range []struct {
		name      string
		in        []importer.Task
		imported  int
		field     string
		rule      string
		action    string
		strictErr string // the code strict refuses with
		check     func(t *testing.T, f *fixture, tt *trailTexts, ids map[string]string)
	}{
		{
			name: "long text kept whole in the trail", in: []importer.Task{tm("1", 1, func(t *importer.Task) { t.Description = &long })},
			imported: 1, field: "description", rule: "maxLength", action: "thought trail", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, tt *trailTexts, ids map[string]string) {
				got := f.get(t, ids["1"])
				if n := len([]rune(got.Description)); n > MaxDescriptionLen || !strings.HasPrefix(got.Description, long[:7000]) {
					t.Fatalf("description of %d characters, or not the text's beginning", n)
				}
				if !strings.Contains(got.Description, `"imported text: description"`) {
					t.Fatalf("the description does not name its trail records: %q", got.Description[len(got.Description)-200:])
				}
				num, _ := ParseTaskID(ids["1"])
				if kept := tt.byID[num]; len(kept) != 1 || kept[0].Field != "description" || kept[0].Text != long {
					t.Fatalf("the trail got %d texts, not the whole description", len(kept))
				}
			},
		},
		{
			name: "long title", in: []importer.Task{tm("1", 1, func(t *importer.Task) { t.Title = long[:300] })},
			imported: 1, field: "title", rule: "maxLength", action: "thought trail", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, tt *trailTexts, ids map[string]string) {
				if got := f.get(t, ids["1"]).Title; len([]rune(got)) != MaxTitleLen || !strings.HasSuffix(got, importedtext.TitleMarker) {
					t.Fatalf("title %q", got)
				}
			},
		},
		{
			name: "duplicate id renumbered", in: []importer.Task{tm("42.42", 1), tm("42.42", 2), tm("43", 3, dependsOn("42.42"))},
			imported: 3, field: "task_id", rule: "uniqueItems", action: "imported as 42.42-2", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				second := f.get(t, ids["42.42-2"])
				if second.Source == nil || second.Source.ID != "42.42-2" || second.Title != "task 42.42" {
					t.Fatalf("the second 42.42: %+v", second)
				}
				if deps := f.get(t, ids["43"]).DependsOn; len(deps) != 1 || deps[0] != ids["42.42"] {
					t.Fatalf("43 depends on %v, want the first 42.42 %s", deps, ids["42.42"])
				}
			},
		},
		{
			name:     "cycle imported without its closing edge",
			in:       []importer.Task{tm("12.1", 1, dependsOn("12.4")), tm("12.4", 2, dependsOn("12.1")), tm("12.5", 3, dependsOn("12.1"))},
			imported: 3, field: "depends_on", rule: "acyclic", action: "closes the loop 12.1 → 12.4 → 12.1", strictErr: errs.CircularDependency,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				a, b := f.get(t, ids["12.1"]), f.get(t, ids["12.4"])
				if len(a.DependsOn) != 1 || a.DependsOn[0] != ids["12.4"] || len(b.DependsOn) != 0 {
					t.Fatalf("12.1 depends on %v, 12.4 on %v; want only 12.1 → 12.4 kept", a.DependsOn, b.DependsOn)
				}
				if c := f.get(t, ids["12.5"]); len(c.DependsOn) != 1 {
					t.Fatalf("12.5 lost its dependency: %v", c.DependsOn)
				}
			},
		},
		{
			name: "parent loop", in: []importer.Task{tm("a", 1, func(t *importer.Task) { t.Parent = "b" }), tm("b", 2, func(t *importer.Task) { t.Parent = "a" })},
			imported: 2, field: "parent_id", rule: "acyclic", action: "without its parent", strictErr: errs.CircularDependency,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				if f.get(t, ids["a"]).ParentID != "" && f.get(t, ids["b"]).ParentID != "" {
					t.Fatal("both tasks kept their parent")
				}
			},
		},
		{
			name: "missing dependency dropped", in: []importer.Task{tm("1", 1), tm("2", 2, dependsOn("1", "other-tag:7"))},
			imported: 2, field: "depends_on", rule: "exists", action: "dropped the dependency on other-tag:7", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				if deps := f.get(t, ids["2"]).DependsOn; len(deps) != 1 || deps[0] != ids["1"] {
					t.Fatalf("2 depends on %v, want [%s]", deps, ids["1"])
				}
			},
		},
		{
			name: "missing parent dropped", in: []importer.Task{tm("5.1", 1, func(t *importer.Task) { t.Parent = "5" })},
			imported: 1, field: "parent_id", rule: "exists", action: "without its parent 5", strictErr: errs.InvalidInput,
		},
		{
			name: "broken task skipped", in: []importer.Task{tm("1", 1, func(t *importer.Task) { t.Status = "finished" }), tm("2", 2, dependsOn("1"))},
			imported: 1, field: "status", rule: "enum", action: "skipped the task", strictErr: errs.InvalidInput,
		},
		{
			name: "link across projects dropped", in: []importer.Task{tm("1", 1), tm("y:1", 2, dependsOn("1"), func(t *importer.Task) { t.Project = "other" })},
			imported: 2, field: "depends_on", rule: "sameProject", action: "dropped the link: dependency 1 is in the import's project", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				if got := f.get(t, ids["y:1"]); got.Project != "other" || len(got.DependsOn) != 0 {
					t.Fatalf("y:1: %+v", got)
				}
			},
		},
		{
			name: "link to a skipped task dropped", in: []importer.Task{tm("1", 1, func(t *importer.Task) { t.Status = "finished" }), tm("2", 2, dependsOn("1"))},
			imported: 1, field: "depends_on", rule: "exists", action: "dependency on 1, which the import skipped", strictErr: errs.InvalidInput,
		},
		{
			name: "status the reader mended", in: []importer.Task{tm("1", 1, readerMended("status", "in-review"))},
			imported: 1, field: "status", rule: "enum", action: "imported with status review", strictErr: errs.InvalidInput,
			check: func(t *testing.T, f *fixture, _ *trailTexts, ids map[string]string) {
				if got := f.get(t, ids["1"]); got.Status != StatusReview {
					t.Fatalf("status %s, want review", got.Status)
				}
			},
		},
		{
			name: "item the reader skipped", in: []importer.Task{tm("1", 1), readerSkipped("2", 2), tm("3", 3, dependsOn("1"))},
			imported: 2, field: "title", rule: "type", action: "skipped the task: title must be a string", strictErr: errs.InvalidInput,
		},
		{
			name: "link to an item the reader skipped", in: []importer.Task{readerSkipped("1", 1), tm("2", 2, dependsOn("1"))},
			imported: 1, field: "depends_on", rule: "exists", action: "dependency on 1, which the import skipped", strictErr: errs.InvalidInput,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, tt := withTrail(t)
			ids := map[string]string{}
			out, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", importer.Tasks(c.in), ImportOptions{Format: "taskmaster"}, func(k, id string) error {
				ids[k] = id
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Imported != c.imported || countTasks(t, f.st) != c.imported {
				t.Fatalf("imported %d (store: %d), want %d", out.Imported, countTasks(t, f.st), c.imported)
			}
			found := false
			for _, r := range out.Report {
				if r.Field == c.field && r.Rule == c.rule && strings.Contains(r.Action, c.action) && r.Fix != "" && strings.HasPrefix(r.Place, "tasks.json line ") {
					found = true
				}
			}
			if !found {
				t.Fatalf("no report entry %s/%s %q in %+v", c.field, c.rule, c.action, out.Report)
			}
			if c.check != nil {
				c.check(t, f, tt, ids)
			}

			strict, _ := withTrail(t)
			_, err = strict.svc.ImportFrom(Call{Actor: "op"}, "imp", importer.Tasks(c.in), ImportOptions{Strict: true, Format: "taskmaster"}, nil)
			if e, ok := errs.As(err); !ok || e.Code != c.strictErr {
				t.Fatalf("strict: %v, want %s", err, c.strictErr)
			}
			if n := countTasks(t, strict.st); n != 0 {
				t.Fatalf("a strict import refused wrote %d tasks", n)
			}
		})
	}
}

// A dry run answers the report and writes nothing: no task, no journal,
// no trail.
func TestImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	f, tt := withTrail(t)
	long := strings.Repeat("x", MaxDescriptionLen+1)
	in := []importer.Task{tm("1", 1, func(t *importer.Task) { t.Description = &long }), tm("1", 2), tm("2", 3, dependsOn("9"))}
	before := countTasks(t, f.st)
	out, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", importer.Tasks(in), ImportOptions{DryRun: true, Format: "jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.DryRun || out.Imported != 3 || out.Changes != 3 || len(out.Report) != 3 || out.Transactions != 0 {
		t.Fatalf("dry run answered %+v", out)
	}
	if after := countTasks(t, f.st); after != before {
		t.Fatalf("a dry run wrote %d tasks", after-before)
	}
	if len(tt.byID) != 0 || journalOf(t, f) != nil {
		t.Fatal("a dry run wrote to the trail or the journal")
	}
	if _, err := f.svc.ImportFrom(Call{Actor: "op"}, "nowhere", importer.Tasks(in), ImportOptions{DryRun: true, Format: "jsonl"}, nil); err == nil {
		t.Fatal("a dry run into an unregistered project answered a report")
	} else {
		wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
	}
}

// An import with nothing left to import answers its report and writes
// nothing.
func TestImportAllSkipped(t *testing.T) {
	t.Parallel()
	f, _ := withTrail(t)
	out, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", importer.Tasks{tm("1", 1, func(t *importer.Task) { t.Status = "finished" })}, ImportOptions{Format: "jsonl"}, nil)
	if err != nil || out.Imported != 0 || out.Skipped != 1 || len(out.Report) != 1 {
		t.Fatalf("answered %+v, %v", out, err)
	}
	if countTasks(t, f.st) != 0 {
		t.Fatal("tasks written")
	}
}

// The origin survives the store's reopening, on bbolt and PostgreSQL, and
// task_list's search finds a task by its source id.
func TestImportOriginSurvivesReopen(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		setting := os.Getenv(store.SettingEnv)
		dir := t.TempDir()
		st, err := store.OpenFor(dir, setting)
		if err != nil {
			t.Fatal(err)
		}
		svc := New(st, Config{})
		if _, err := svc.AddProject("imp"); err != nil {
			t.Fatal(err)
		}
		in := []importer.Task{
			{Key: "task-222.1", Source: "back-222.1", SourceCreated: "2025-06-08T14:29:00Z", SourceUpdated: "2025-07-01T09:00:00Z", Where: importer.Where{File: "back-222.1.md"}, Title: "a backlog task"},
			{Key: "42.3", Where: importer.Where{File: "tasks.json", Line: 3}, Title: "a plain task"},
		}
		ids := map[string]string{}
		if _, err := svc.ImportFrom(Call{Actor: "op"}, "imp", importer.Tasks(in), ImportOptions{Format: "backlog"}, func(k, id string) error {
			ids[k] = id
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		_ = svc.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if st, err = store.OpenFor(dir, setting); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = st.Close() }()
		svc = New(st, Config{})
		defer func() { _ = svc.Close() }()
		got, err := svc.Get(GetInput{TaskID: ids["task-222.1"]})
		if err != nil {
			t.Fatal(err)
		}
		want := Origin{ID: "back-222.1", Format: "backlog", CreatedAt: "2025-06-08T14:29:00Z", UpdatedAt: "2025-07-01T09:00:00Z"}
		if got.Source == nil || *got.Source != want {
			t.Fatalf("source after reopening: %+v, want %+v", got.Source, want)
		}
		if plain, _ := svc.Get(GetInput{TaskID: ids["42.3"]}); plain.Source == nil || plain.Source.ID != "42.3" || plain.Source.CreatedAt != "" {
			t.Fatalf("source of 42.3: %+v", plain.Source)
		}
		for term, id := range map[string]string{"back-222.1": ids["task-222.1"], "42.3": ids["42.3"]} {
			list, err := svc.List(ListInput{Search: &term})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tasks) != 1 || list.Tasks[0].TaskID != id {
				t.Fatalf("search %q found %+v, want %s", term, list.Tasks, id)
			}
		}
		// An update keeps the origin.
		desc := "changed"
		if _, err := svc.Update("op", UpdateInput{TaskID: ids["42.3"], Description: &desc}); err != nil {
			t.Fatal(err)
		}
		if after, _ := svc.Get(GetInput{TaskID: ids["42.3"]}); after.Source == nil || after.Source.ID != "42.3" {
			t.Fatalf("an update lost the origin: %+v", after.Source)
		}
	})
}

// A record without an origin keeps the first format byte for byte, so
// stores written before origins read as they were; one with an origin
// is the second format, and both decode to what was encoded.
func TestRecordOriginFormat(t *testing.T) {
	t.Parallel()
	plain := &record{num: 7, project: "p", status: 1, priority: 2, assignee: "a", labels: []string{"x"}, title: "t", description: "d"}
	withOrigin := *plain
	withOrigin.origin = Origin{ID: "42.3", Format: "taskmaster", UpdatedAt: "2025-01-01T00:00:00Z"}
	for _, c := range []struct {
		rec     *record
		version byte
	}{{plain, recordFormatVersion}, {&withOrigin, recordWithOrigin}} {
		b := c.rec.encode()
		if b[0] != c.version {
			t.Fatalf("format %d, want %d", b[0], c.version)
		}
		var raw rawRecord
		if err := decodeRaw(7, b, &raw); err != nil {
			t.Fatal(err)
		}
		got := raw.materialize()
		if got.origin != c.rec.origin || got.description != c.rec.description || got.title != c.rec.title {
			t.Fatalf("decoded %+v, want %+v", got, c.rec)
		}
	}
	if b := withOrigin.encode(); decodeRaw(7, b[:len(b)-3], &rawRecord{}) == nil {
		t.Fatal("a cut record with an origin decoded")
	}
}

// readerMended is a task whose reader mapped an unknown value of field to
// a cairn one, as importer's readers do (importer.Mend).
func readerMended(field, value string) func(*importer.Task) {
	return func(t *importer.Task) {
		t.Status = StatusReview
		t.Mended = append(t.Mended, importer.Mend{
			Where: t.Where, Field: field, Rule: "enum",
			Action: "imported with status review, the nearest to " + value, Fix: "use a status of the source's",
			Refusal: importer.Refuse(t.Where, field, "enum", "task %s has status %q", t.Key, value),
		})
	}
}

// readerSkipped is an item its reader could not read: only its key and
// place, and why.
func readerSkipped(key string, line int) importer.Task {
	w := importer.Where{File: "tasks.json", Line: line}
	return importer.Task{Key: key, Where: w, Skip: importer.Refuse(w, "title", "type", "title must be a string, not 5")}
}
