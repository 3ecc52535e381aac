package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// differ compiles raw with both validators and compares them on docs;
// it reports the first difference ("" when they agree). Both must agree
// on whether the schema compiles at all.
func differ(t testing.TB, raw []byte, docs [][]byte) string {
	t.Helper()
	o, oerr := compileOracle(raw)
	v, verr := Compile(raw)
	switch {
	case oerr != nil && verr != nil:
		return ""
	case oerr != nil:
		return "schema " + string(raw) + ": compiled, the oracle refuses it: " + oerr.Error()
	case verr != nil:
		return "schema " + string(raw) + ": refused, the oracle compiles it: " + verr.Error()
	}
	for _, doc := range docs {
		if d := compareOne(v, o, doc); d != "" {
			return "schema " + string(raw) + "\n" + d
		}
	}
	return ""
}

// drawCase draws a schema and n documents near it.
func drawCase(seed1, seed2 uint64, n int) (raw []byte, docs [][]byte) {
	g := newGen(seed1, seed2)
	s := g.schema(0, true)
	raw, _ = json.Marshal(s)
	var decoded map[string]any
	_ = json.Unmarshal(raw, &decoded)
	for i := 0; i < n; i++ {
		d, _ := json.Marshal(g.doc(decoded, decoded, 0))
		docs = append(docs, d)
	}
	return raw, docs
}

// The new validator accepts and refuses exactly what the old one did, with
// the same error (or, where the old one chose among equally deep
// violations by map order, one of the errors it could give).
func TestDifferentialGeneratedSchemas(t *testing.T) {
	t.Parallel()
	n := 4000
	if testing.Short() {
		n = 500
	}
	for seed := 0; seed < n; seed++ {
		raw, docs := drawCase(uint64(seed), 14, 25)
		if d := differ(t, raw, docs); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
	}
}

// toolSchemas are the input and output schemas of every tool the plugins
// and examples register, from their tool snapshots.
func toolSchemas(t testing.TB) map[string][]byte {
	var files []string
	for _, glob := range []string{"../../plugins/*/testdata/toolsnaps/*.snap", "../../examples/*/testdata/toolsnaps/*.snap"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 100 {
		t.Fatalf("found %d tool snapshots, want every plugin's (over 100)", len(files))
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if err := json.Unmarshal(b, &snap); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(snap.InputSchema) == 0 {
			t.Fatalf("%s: no input schema", f)
		}
		out[f+" input"] = snap.InputSchema
		if len(snap.OutputSchema) > 0 {
			out[f+" output"] = snap.OutputSchema
		}
	}
	return out
}

// Every registered tool's schemas compile, and both validators agree on
// documents drawn near them.
func TestDifferentialToolSchemas(t *testing.T) {
	t.Parallel()
	for name, raw := range toolSchemas(t) {
		if _, err := Compile(raw); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var decoded map[string]any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		g := newGen(uint64(len(raw)), 14)
		var docs [][]byte
		for i := 0; i < 300; i++ {
			d, _ := json.Marshal(g.doc(decoded, decoded, 0))
			docs = append(docs, d)
		}
		if d := differ(t, raw, docs); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
}

// FuzzValidate compares the two validators on a drawn schema, with the
// fuzzer's bytes as one document (parse errors included) beside documents
// drawn near the schema.
func FuzzValidate(f *testing.F) {
	for _, c := range []struct {
		s1, s2 uint64
		doc    string
	}{
		{1, 2, `{}`}, {3, 4, `{"a":1}`}, {5, 6, `[1,2,2]`}, {7, 8, `"abc"`}, {9, 10, `{"name":"x","3":[]}`},
		{11, 12, `1.0`}, {13, 14, `{"a":`}, {15, 16, `{} x`}, {17, 18, ``}, {19, 20, `{"ids":["T-1","T-1"]}`},
	} {
		f.Add(c.s1, c.s2, []byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64, doc []byte) {
		raw, docs := drawCase(s1, s2, 5)
		if d := differ(t, raw, append(docs, doc)); d != "" {
			t.Fatal(d)
		}
	})
}
