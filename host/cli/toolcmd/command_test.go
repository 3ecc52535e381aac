package toolcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// testSchema has a property of every kind a flag can take.
const testSchema = `{
  "type": "object", "additionalProperties": false,
  "required": ["title", "count"],
  "properties": {
    "task_id": {"type": "string", "minLength": 2},
    "title":   {"type": "string", "minLength": 1, "maxLength": 10, "description": "What it is"},
    "count":   {"type": "integer", "minimum": 1},
    "ratio":   {"type": "number"},
    "done":    {"type": "boolean"},
    "status":  {"type": "string", "enum": ["todo", "done"]},
    "labels":  {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "kinds":   {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    "ids":     {"type": "array", "items": {"type": "integer"}},
    "meta":    {"type": "object"},
    "either":  {"type": ["string", "null"]},
    "limit":   {"type": "integer", "default": 50},
    "window":  {"type": "object", "properties": {"per_minute": {"type": "integer"}}}
  }
}`

// usageError is the test program's usage error.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// fakeConn records the call and answers with out.
type fakeConn struct {
	tool string
	args map[string]any
	out  string
}

func (f *fakeConn) Call(_ context.Context, tool string, args any, _ any) (json.RawMessage, error) {
	f.tool = tool
	raw, _ := json.Marshal(args)
	f.args = nil
	_ = json.Unmarshal(raw, &f.args)
	return json.RawMessage(f.out), nil
}

func (f *fakeConn) Close() {}

// testTree builds "prog things make <task-id>" from the test schema.
func testTree(conn *fakeConn, spec Spec) (*cobra.Command, *bool) {
	asJSON := new(bool)
	b := Builder{
		Tools: Inventory{"thing_make": {Name: "thing_make", Title: "Make a thing", Description: "Makes a thing.", InputSchema: json.RawMessage(testSchema)}},
		Runtime: Runtime{
			Connect: func(*cobra.Command, bool) (Conn, error) { return conn, nil },
			JSON:    func(*cobra.Command) bool { return *asJSON },
			Usage:   func(_ *cobra.Command, msg string) error { return usageError{msg} },
		},
		FlagNames: map[string]string{"labels": "label"},
		Reserved:  []string{"json"},
	}
	spec.Tool, spec.Use = "thing_make", "make"
	root := &cobra.Command{Use: "prog", SilenceErrors: true, SilenceUsage: true}
	root.PersistentFlags().BoolVar(asJSON, "json", false, "print JSON")
	root.AddCommand(Group("things", "Things", b.Command(spec)))
	return root, asJSON
}

func run(t *testing.T, spec Spec, args ...string) (*fakeConn, string, error) {
	t.Helper()
	conn := &fakeConn{out: `{"id":"t-1","labels":["a"],"items":[{"n":1},{"n":2}]}`}
	root, _ := testTree(conn, spec)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"things", "make"}, args...))
	err := root.Execute()
	return conn, out.String(), err
}

func TestFlagsCarryEveryKind(t *testing.T) {
	t.Parallel()
	base := []string{"T-1", "--title", "x", "--count", "2"}
	spec := Spec{Args: []string{"task_id"}, Flatten: []string{"window"}}
	for _, c := range []struct {
		name string
		args []string
		want map[string]any
	}{
		{"required and positional", nil, map[string]any{}},
		{"number and boolean", []string{"--ratio", "0.5", "--done"}, map[string]any{"ratio": 0.5, "done": true}},
		{"enum", []string{"--status", "done"}, map[string]any{"status": "done"}},
		{"array repeated", []string{"--label", "a", "--label", "b"}, map[string]any{"labels": []any{"a", "b"}}},
		{"array comma-separated, kebab spelling", []string{"--labels", "a,b"}, map[string]any{"labels": []any{"a", "b"}}},
		{"array of integers", []string{"--ids", "1", "--ids", "2"}, map[string]any{"ids": []any{1.0, 2.0}}},
		{"object as JSON", []string{"--meta", `{"k": [1]}`}, map[string]any{"meta": map[string]any{"k": []any{1.0}}}},
		{"several types as JSON", []string{"--either", "null"}, map[string]any{"either": nil}},
		{"flattened object", []string{"--per-minute", "5"}, map[string]any{"window": map[string]any{"per_minute": 5.0}}},
		{"flattened into its JSON flag", []string{"--window", `{"per_minute":1}`, "--per-minute", "7"}, map[string]any{"window": map[string]any{"per_minute": 7.0}}},
	} {
		conn, _, err := run(t, spec, append(append([]string{}, base...), c.args...)...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := map[string]any{"task_id": "T-1", "title": "x", "count": 2.0}
		for k, v := range c.want {
			want[k] = v
		}
		if conn.tool != "thing_make" || !reflect.DeepEqual(conn.args, want) {
			t.Errorf("%s: called %s with %v, want %v", c.name, conn.tool, conn.args, want)
		}
	}
}

func TestBadValuesAreRefusedAsTheToolWould(t *testing.T) {
	t.Parallel()
	spec := Spec{Args: []string{"task_id"}}
	for _, c := range []struct {
		name         string
		args         []string
		field, rule  string // a tool's refusal: its field and constraint
		usage, flags string // else a usage error or cobra's flag error naming this
	}{
		{name: "enum", args: []string{"T-1", "--title", "x", "--count", "1", "--status", "bogus"}, field: "status", rule: "enum"},
		{name: "minLength", args: []string{"T-1", "--title", "", "--count", "1"}, field: "title", rule: "minLength"},
		{name: "maxItems", args: []string{"T-1", "--title", "x", "--count", "1", "--label", "a,b,c"}, field: "labels", rule: "maxItems"},
		{name: "minimum", args: []string{"T-1", "--title", "x", "--count", "0"}, field: "count", rule: "minimum"},
		{name: "positional too short", args: []string{"T", "--title", "x", "--count", "1"}, field: "task_id", rule: "minLength"},
		{name: "integer item", args: []string{"T-1", "--title", "x", "--count", "1", "--ids", "x"}, usage: "--ids"},
		{name: "JSON", args: []string{"T-1", "--title", "x", "--count", "1", "--meta", "{"}, flags: "--meta"},
		{name: "integer flag", args: []string{"T-1", "--title", "x", "--count", "many"}, flags: "--count"},
		{name: "required flag", args: []string{"T-1", "--title", "x"}, flags: `"count"`},
		{name: "argument count", args: []string{"--title", "x", "--count", "1"}, flags: "accepts 1 arg"},
	} {
		conn, _, err := run(t, spec, c.args...)
		if err == nil {
			t.Errorf("%s: accepted, called with %v", c.name, conn.args)
			continue
		}
		if conn.tool != "" {
			t.Errorf("%s: the tool was called although the command line was refused", c.name)
		}
		var e *errs.Error
		var u usageError
		switch {
		case c.field != "":
			if !errors.As(err, &e) || e.Code != errs.InvalidInput || e.Details["field"] != c.field || e.Details["constraint"] != c.rule {
				t.Errorf("%s: %v, want the tool's refusal of field %s by %s", c.name, err, c.field, c.rule)
			}
		case c.usage != "":
			if !errors.As(err, &u) || !strings.Contains(u.msg, c.usage) {
				t.Errorf("%s: %v, want a usage error naming %s", c.name, err, c.usage)
			}
		default:
			if !strings.Contains(err.Error(), c.flags) {
				t.Errorf("%s: %v, want an error naming %s", c.name, err, c.flags)
			}
		}
	}
}

func TestHelpComesFromTheSchema(t *testing.T) {
	t.Parallel()
	root, _ := testTree(&fakeConn{}, Spec{Args: []string{"task_id"}, Defaults: map[string]any{"status": "todo"}, Required: []string{"ratio"}})
	cmd, _, err := root.Find([]string{"things", "make"})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Use != "make <task-id>" || cmd.Short != "Make a thing" || cmd.Long != "Makes a thing." {
		t.Errorf("use %q short %q long %q", cmd.Use, cmd.Short, cmd.Long)
	}
	for flag, want := range map[string]struct{ usage, def, typ string }{
		"title":  {"What it is (required)", "", "string"},
		"count":  {"count (required)", "0", "int64"},
		"ratio":  {"ratio (required)", "0", "float64"},
		"status": {"status (one of: todo, done)", "todo", "string"},
		"label":  {"labels (repeatable)", "[]", "stringSlice"},
		"kinds":  {"kinds (each one of: a, b) (repeatable)", "[]", "stringSlice"},
		"meta":   {"meta (JSON)", "", "json"},
		"limit":  {"limit", "50", "int64"},
		"done":   {"done", "false", "bool"},
	} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("no --%s", flag)
			continue
		}
		if f.Usage != want.usage || f.DefValue != want.def || f.Value.Type() != want.typ {
			t.Errorf("--%s: usage %q default %q type %s, want %q %q %s", flag, f.Usage, f.DefValue, f.Value.Type(), want.usage, want.def, want.typ)
		}
	}
	if cmd.Flags().Lookup("task-id") != nil {
		t.Error("a positional argument is a flag too")
	}
	// The spec's default is sent when the flag is not given; the schema's
	// is left to the tool.
	conn, _, err := run(t, Spec{Args: []string{"task_id"}, Defaults: map[string]any{"status": "todo"}}, "T-1", "--title", "x", "--count", "1")
	if err != nil || conn.args["status"] != "todo" || conn.args["limit"] != nil {
		t.Errorf("defaults: %v %v", err, conn.args)
	}
}

func TestOutputIsJSONOrReadable(t *testing.T) {
	t.Parallel()
	_, out, err := run(t, Spec{Args: []string{"task_id"}}, "T-1", "--title", "x", "--count", "1", "--json")
	if err != nil || !strings.Contains(out, `"id": "t-1"`) {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	_, out, err = run(t, Spec{Args: []string{"task_id"}}, "T-1", "--title", "x", "--count", "1")
	want := "id      t-1\nlabels  a\n\nitems:\nN\n1\n2\n"
	if err != nil || out != want {
		t.Fatalf("generic rendering: %v\n%q, want\n%q", err, out, want)
	}
	spec := Spec{
		Args:   []string{"task_id"},
		Check:  func(inv *Invocation, _ map[string]any) error { inv.Notes = append(inv.Notes, "noted"); return nil },
		Render: func(w io.Writer, out, in map[string]any) { fmt.Fprintf(w, "%s for %s\n", out["id"], in["task_id"]) },
	}
	if _, out, err = run(t, spec, "T-1", "--title", "x", "--count", "1"); err != nil || out != "t-1 for T-1\n\nnoted\n" {
		t.Fatalf("spec rendering: %v %q", err, out)
	}
}

func TestAReservedFlagCannotBeAProperty(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "--json") {
			t.Fatalf("recovered %v, want a refusal naming --json", r)
		}
	}()
	Builder{
		Tools:    Inventory{"t": {Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"json":{"type":"boolean"}}}`)}},
		Reserved: []string{"json"},
	}.Command(Spec{Tool: "t", Use: "t"})
}

func TestKebab(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"grace_period_ms": "grace-period-ms", "maxRetries": "max-retries", "name": "name", "rateLimitPerSecond": "rate-limit-per-second"} {
		if got := Kebab(in); got != want {
			t.Errorf("Kebab(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReferenceListsCommandsAndFlags(t *testing.T) {
	t.Parallel()
	root, _ := testTree(&fakeConn{}, Spec{Args: []string{"task_id"}})
	things, _, _ := root.Find([]string{"things"})
	ref := Reference(things)
	for _, want := range []string{
		"### `prog things`",
		"#### `prog things make <task-id>`",
		"Make a thing. Calls `thing_make`: Makes a thing.",
		"| `--title` | string |  | What it is (required) |",
		"| `--limit` | integer | `50` | limit |",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("reference lacks %q:\n%s", want, ref)
		}
	}
}
