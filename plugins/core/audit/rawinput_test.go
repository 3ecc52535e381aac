package audit

import (
	"encoding/json"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Invalid UTF-8 — raw bytes or a lone surrogate escape — in any string of a
// tool input is refused with 400 naming the field, before decoding could
// replace it with U+FFFD and the chain hash it.
func TestInputsRefuseInvalidUTF8(t *testing.T) {
	t.Parallel()
	const bad = "\xff"
	const lone = `\ud800`
	type target interface{ UnmarshalJSON([]byte) error }
	record := func() target { return &RecordInput{} }
	for _, c := range []struct {
		name  string
		in    func() target
		raw   string
		field string
	}{
		{"task_id", record, `{"task_id":"T-1` + bad + `","type":"decision","content":"x"}`, "task_id"},
		{"type", record, `{"task_id":"T-1","type":"decision` + bad + `","content":"x"}`, "type"},
		{"content", record, `{"task_id":"T-1","type":"decision","content":"use ` + bad + ` bbolt"}`, "content"},
		{"content lone surrogate", record, `{"task_id":"T-1","type":"decision","content":"a` + lone + `b"}`, "content"},
		{"content lone low surrogate", record, `{"task_id":"T-1","type":"decision","content":"\udc00"}`, "content"},
		{"branch", record, `{"task_id":"T-1","type":"decision","content":"x","branch":"` + bad + `"}`, "branch"},
		{"commit_sha", record, `{"task_id":"T-1","type":"decision","content":"x","commit_sha":"` + lone + `"}`, "commit_sha"},
		{"tests_run item", record, `{"task_id":"T-1","type":"decision","content":"x","tests_run":["ok","` + bad + `"]}`, "tests_run[1]"},
		{"blockers item", record, `{"task_id":"T-1","type":"decision","content":"x","blockers":["` + lone + `"]}`, "blockers[0]"},
		{"metadata value", record, `{"task_id":"T-1","type":"decision","content":"x","metadata":{"a":{"b":"` + bad + `"}}}`, "metadata.a.b"},
		{"metadata key", record, `{"task_id":"T-1","type":"decision","content":"x","metadata":{"` + lone + `":1}}`, "metadata"},
		{"auditor_id", func() target { return &StartInput{} }, `{"task_id":"T-1","auditor_id":"` + bad + `"}`, "auditor_id"},
		{"reason", func() target { return &StartInput{} }, `{"task_id":"T-1","auditor_id":"a","reason":"` + lone + `"}`, "reason"},
		{"list type", func() target { return &ListInput{} }, `{"task_id":"T-1","type":"` + bad + `"}`, "type"},
		{"verify session_id", func() target { return &VerifyInput{} }, `{"session_id":"A-1` + bad + `"}`, "session_id"},
		{"finalize task_id", func() target { return &FinalizeInput{} }, `{"session_id":"A-1","task_id":"` + lone + `"}`, "task_id"},
		{"root session_id", func() target { return &RootInput{} }, `{"session_id":"` + bad + `"}`, "session_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(c.raw), c.in())
			wantErr(t, err, 400, errs.InvalidInput, c.field, "utf8")
		})
	}
}

func TestInputsRefuseDeepNesting(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, MaxInputDepth) + "1" + strings.Repeat("}", MaxInputDepth)
	err := json.Unmarshal([]byte(`{"task_id":"T-1","type":"decision","content":"x","metadata":`+deep+`}`), &RecordInput{})
	wantErr(t, err, 400, errs.InvalidInput, "metadata"+strings.Repeat(".a", MaxInputDepth-1), "max_depth")
}

// Valid input still decodes, escapes and surrogate pairs included, and the
// record's hash covers exactly the text sent.
func TestInputsDecodeValidText(t *testing.T) { pgtest.EachStore(t, testInputsDecodeValidText) }

func testInputsDecodeValidText(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	var in RecordInput
	raw := `{"task_id":"` + id + `","type":"decision","content":"caf\u00e9 \ud83d\ude00 \"q\" ✓","tests_run":["a"],"metadata":{"k":[1,{"x":"y"}]}}`
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatal(err)
	}
	if in.Content != "café 😀 \"q\" ✓" || len(in.TestsRun) != 1 || string(in.Metadata) != `{"k":[1,{"x":"y"}]}` {
		t.Fatalf("decoded %+v", in)
	}
	out, err := e.audit.Record("bob", in)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := e.audit.List(ListInput{TaskID: &id})
	if l.Thoughts[0].Content != in.Content || out.ChainPosition != 1 {
		t.Fatalf("stored %q", l.Thoughts[0].Content)
	}
}
