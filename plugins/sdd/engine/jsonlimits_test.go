package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// nested returns a JSON array nested depth levels deep around 1.
func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth))
}

// stateFile is the stored document: the file, or the sdd_state row with
// the newline the file ends with.
func stateFile(t *testing.T, fx *fixture) []byte {
	t.Helper()
	if fx.e.pg != nil {
		b, err := fx.e.pg.load()
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	b, err := os.ReadFile(fx.e.StatePath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantLimit checks a 400 naming field, constraint and limit.
func wantLimit(t *testing.T, err error, field, constraint string, limit int) {
	t.Helper()
	wantErr(t, err, 400, errs.InvalidInput, field)
	e, _ := errs.As(err)
	if e.Details["constraint"] != constraint || e.Details["limit"] != limit {
		t.Fatalf("details = %v, want constraint %s limit %d (%s)", e.Details, constraint, limit, e.Message)
	}
}

// TestDeepValueRefusedStateUnchanged is the audit's finding: a 20 KB value
// nested 9,990 deep became a 200 MB state file. It is now refused naming
// the field and the limit, and the state file keeps every byte.
func TestDeepValueRefusedStateUnchanged(t *testing.T) {
	pgtest.EachStore(t, testDeepValueRefusedStateUnchanged)
}

func testDeepValueRefusedStateUnchanged(t *testing.T) {
	fx := newFixture(t)
	if _, err := fx.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "keep", Value: []byte(`{"a":[1,2]}`)}); err != nil {
		t.Fatal(err)
	}
	before := stateFile(t, fx)
	deep := nested(9990)
	if len(deep) < 19_000 || len(deep) > 21_000 {
		t.Fatalf("test value is %d bytes, want about 20 KB", len(deep))
	}
	_, err := fx.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "deep", Value: deep})
	wantLimit(t, err, "value", "maxDepth", MaxValueDepth)
	// The Go API refuses it too (it measures the encoding it would store).
	var v any
	if err := json.Unmarshal(nested(MaxValueDepth+1), &v); err != nil {
		t.Fatal(err)
	}
	_, err = fx.e.SetStateValue("deep", v)
	wantLimit(t, err, "value", "maxDepth", MaxValueDepth)
	if after := stateFile(t, fx); !bytes.Equal(before, after) {
		t.Fatalf("the state file changed after a refused write (%d -> %d bytes)", len(before), len(after))
	}
	if st, _ := fx.e.StateTool(Call{}, StateInput{Action: "list"}); strings.Contains(string(st.Value), "deep") {
		t.Fatal("the refused value is visible")
	}
}

func TestValueLimits(t *testing.T) { pgtest.EachStore(t, testValueLimits) }

func testValueLimits(t *testing.T) {
	cases := []struct {
		name       string
		value      []byte
		constraint string
		limit      int
	}{
		{"depth at the limit", nested(MaxValueDepth), "", 0},
		{"depth one over", nested(MaxValueDepth + 1), "maxDepth", MaxValueDepth},
		{"objects count as levels", []byte(strings.Repeat(`{"a":`, MaxValueDepth+1) + "1" + strings.Repeat("}", MaxValueDepth+1)), "maxDepth", MaxValueDepth},
		{"brackets inside strings are text", []byte(`"` + strings.Repeat("[{", 500) + `"`), "", 0},
		{"size at the limit", []byte(`"` + strings.Repeat("x", MaxValueBytes-2) + `"`), "", 0},
		{"size one over", []byte(`"` + strings.Repeat("x", MaxValueBytes-1) + `"`), "maxBytes", MaxValueBytes},
		// Whitespace is not stored, so it does not count.
		{"indented input measured compact", []byte("[" + strings.Repeat(" ", MaxValueBytes) + "1]"), "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t)
			_, err := fx.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "v", Value: c.value})
			if c.constraint == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantLimit(t, err, "value", c.constraint, c.limit)
		})
	}
}

// TestStateFileCompact: the file is written compactly, so its size stays
// within a small factor of what was stored, however deep the value.
func TestStateFileCompact(t *testing.T) { pgtest.EachStore(t, testStateFileCompact) }

func testStateFileCompact(t *testing.T) {
	fx := newFixture(t)
	v := nested(MaxValueDepth)
	big := []byte(`"` + strings.Repeat("x", 200<<10) + `"`)
	for _, kv := range []struct {
		k string
		v []byte
	}{{"deep", v}, {"big", big}} {
		if _, err := fx.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: kv.k, Value: kv.v}); err != nil {
			t.Fatal(err)
		}
	}
	data := stateFile(t, fx)
	stored := len(v) + len(big)
	if len(data) > stored+8<<10 {
		t.Fatalf("state file is %d bytes for %d bytes of values", len(data), stored)
	}
	if bytes.Contains(data, []byte("\n  ")) {
		t.Fatal("state file is indented")
	}
	// The text shown for a large value is compact too.
	st, err := fx.e.StateTool(Call{}, StateInput{Action: "list"})
	if err != nil || len(st.Text) > stored+8<<10 {
		t.Fatalf("list text is %d bytes: %v", len(st.Text), err)
	}
}

// TestStateSizeLimit: many values of the maximum size cannot grow the file
// past its bound; the refusal names value and the limit and changes nothing.
func TestStateSizeLimit(t *testing.T) { pgtest.EachStore(t, testStateSizeLimit) }

func testStateSizeLimit(t *testing.T) {
	old := stateLimit
	stateLimit = 64 << 10
	defer func() { stateLimit = old }()
	fx := newFixture(t)
	chunk := []byte(`"` + strings.Repeat("y", 20<<10) + `"`)
	var err error
	n := 0
	for ; n < 10 && err == nil; n++ {
		_, err = fx.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "k" + string(rune('a'+n)), Value: chunk})
	}
	if n != 4 {
		t.Fatalf("refused at write %d, want the 4th (3 x 20 KiB fit in 64 KiB)", n)
	}
	wantLimit(t, err, "value", "maxBytes", stateLimit)
	if len(stateFile(t, fx)) > stateLimit {
		t.Fatal("state file over its limit")
	}
}

// depthOf is the reference depth: decode and walk.
func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// FuzzJSONDepth: on valid JSON the byte scan agrees with a full decode,
// and on any input it neither panics nor reports a depth under the limit
// once it refused.
func FuzzJSONDepth(f *testing.F) {
	for _, s := range []string{`1`, `[]`, `{"a":[{"b":"]]]"}]}`, `"\"[["`, `[[["\\"]]]`, `{"[":"{"}`, `[`, `]]]`, `"unterminated [`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := jsonDepth(data, 8)
		if err != nil && got <= 8 {
			t.Fatalf("refused at depth %d", got)
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		want := depthOf(v)
		if err == nil && got != want {
			t.Fatalf("%q: depth %d, want %d", data, got, want)
		}
		if err != nil && want <= 8 {
			t.Fatalf("%q: refused, but depth is %d", data, want)
		}
	})
}
