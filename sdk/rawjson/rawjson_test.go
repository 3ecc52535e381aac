package rawjson

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		name       string
		raw        string
		max        int
		field      string // "" with ok means accepted
		constraint string
	}{
		{name: "object", raw: `{"content":"héllo ✓","tags":["a","b"],"n":-1.5e3,"t":true,"f":false,"z":null}`},
		{name: "empty", raw: ``},
		{name: "whitespace only", raw: " \n\t"},
		{name: "scalar", raw: `"x"`},
		{name: "escapes", raw: `{"a":"q\" b\\ s\/ \b\f\n\r\t \u00e9 \u2028"}`},
		{name: "surrogate pair", raw: `{"a":"\ud83d\ude00 \uD83D\uDE00"}`},
		{name: "escaped backslash before quote", raw: `{"a":"\\","b":"\\\""}`},
		{name: "raw emoji", raw: "{\"a\":\"\xf0\x9f\x98\x80\"}"},
		{name: "depth at limit", raw: deep(3), max: 3},
		{name: "empty containers", raw: `{"a":{},"b":[],"c":[{}]}`},

		{name: "invalid byte in value", raw: "{\"content\":\"ab\xffc\"}", field: "content", constraint: ConstraintUTF8},
		{name: "invalid byte in list item", raw: "{\"tags\":[\"a\",\"b\",\"\xc3\"]}", field: "tags[2]", constraint: ConstraintUTF8},
		{name: "invalid byte nested", raw: "{\"value\":{\"a\":{\"b\":\"\xed\xa0\x80\"}}}", field: "value.a.b", constraint: ConstraintUTF8},
		{name: "overlong encoding", raw: "{\"x\":\"\xc0\xaf\"}", field: "x", constraint: ConstraintUTF8},
		{name: "truncated rune", raw: "{\"x\":\"\xe2\x82\"}", field: "x", constraint: ConstraintUTF8},
		{name: "lone high surrogate", raw: `{"title":"a\ud800b"}`, field: "title", constraint: ConstraintUTF8},
		{name: "lone high at end", raw: `{"title":"\uD800"}`, field: "title", constraint: ConstraintUTF8},
		{name: "lone low surrogate", raw: `{"title":"\udc00"}`, field: "title", constraint: ConstraintUTF8},
		{name: "high then high", raw: `{"t":"\ud800\ud800"}`, field: "t", constraint: ConstraintUTF8},
		{name: "high then escape", raw: `{"t":"\ud800\n"}`, field: "t", constraint: ConstraintUTF8},
		{name: "reversed pair", raw: `{"t":"\ude00\ud83d"}`, field: "t", constraint: ConstraintUTF8},
		{name: "escaped backslash then u", raw: `{"t":"\\ud800"}`},
		{name: "invalid byte in key", raw: "{\"o\":{\"k\xff\":1}}", field: "o", constraint: ConstraintUTF8},
		{name: "lone surrogate in key", raw: `{"\udfff":1}`, field: "", constraint: ConstraintUTF8},
		{name: "escaped key in path", raw: "{\"a\\\"b\":[0,{\"c\\u00e9\":\"\xff\"}]}", field: "a\"b[1].cé", constraint: ConstraintUTF8},
		{name: "root string", raw: "\"\xff\"", field: "", constraint: ConstraintUTF8},
		{name: "too deep", raw: deep(4), max: 3, field: "[0][0][0]", constraint: ConstraintMaxDepth},
		{name: "too deep in member", raw: `{"value":{"a":{"b":{}}}}`, max: 3, field: "value.a.b", constraint: ConstraintMaxDepth},
		{name: "default limit", raw: deep(65), max: 0, field: strings.Repeat("[0]", 64), constraint: ConstraintMaxDepth},
		{name: "default limit holds 64", raw: deep(64), max: -1},
		{name: "limit above the fixed stack", raw: deep(150), max: 150},
		{name: "beyond a large limit", raw: `{"v":` + deep(101) + `}`, max: 100, field: "v" + strings.Repeat("[0]", 99), constraint: ConstraintMaxDepth},
		{name: "deep path keeps keys", raw: `{"v":` + strings.Repeat(`{"k":`, 80) + "\"\xff\"" + strings.Repeat("}", 80) + "}", max: 100, field: "v" + strings.Repeat(".k", 80), constraint: ConstraintUTF8},

		{name: "unterminated string", raw: `{"a":"b`, field: "a", constraint: ConstraintJSON},
		{name: "control character", raw: "{\"a\":\"\x01\"}", field: "a", constraint: ConstraintJSON},
		{name: "bad escape", raw: `{"a":"\x"}`, field: "a", constraint: ConstraintJSON},
		{name: "short unicode escape", raw: `{"a":"\u12"}`, field: "a", constraint: ConstraintJSON},
		{name: "trailing comma", raw: `{"a":1,}`, field: "", constraint: ConstraintJSON},
		{name: "missing colon", raw: `{"a" 1}`, field: "", constraint: ConstraintJSON},
		{name: "trailing data", raw: `{} {}`, field: "", constraint: ConstraintJSON},
		{name: "bad number", raw: `[01]`, field: "[0]", constraint: ConstraintJSON},
		{name: "bad fraction", raw: `[1.]`, field: "[0]", constraint: ConstraintJSON},
		{name: "bad exponent", raw: `[1e+]`, field: "[0]", constraint: ConstraintJSON},
		{name: "bad literal", raw: `[tru]`, field: "[0]", constraint: ConstraintJSON},
		{name: "mismatched bracket", raw: `[1}`, field: "[0]", constraint: ConstraintJSON},
		{name: "unclosed", raw: `[1,`, field: "[1]", constraint: ConstraintJSON},
		{name: "invalid byte outside string", raw: "{\xff}", field: "", constraint: ConstraintJSON},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := Check([]byte(c.raw), c.max)
			if c.constraint == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil {
				t.Fatalf("accepted, want %s at %q", c.constraint, c.field)
			}
			if e.Status != 400 || e.Code != "ERR_INVALID_INPUT" || e.Details["field"] != c.field || e.Details["constraint"] != c.constraint {
				t.Fatalf("got %d %s field %q constraint %v (%s), want field %q constraint %s",
					e.Status, e.Code, e.Details["field"], e.Details["constraint"], e.Message, c.field, c.constraint)
			}
			if !strings.Contains(e.Message, " ") || strings.ContainsRune(e.Message, 0xFFFD) && c.constraint != ConstraintUTF8 {
				t.Fatalf("message %q", e.Message)
			}
		})
	}
}

// The first problem in document order is the one reported.
func TestCheckReportsFirstProblem(t *testing.T) {
	t.Parallel()
	e := Check([]byte("{\"a\":\"\xff\",\"b\":[[[[]]]]}"), 2)
	if e == nil || e.Details["field"] != "a" || e.Details["constraint"] != ConstraintUTF8 {
		t.Fatalf("got %v", e)
	}
	e = Check([]byte("{\"b\":[[[[]]]],\"a\":\"\xff\"}"), 2)
	if e == nil || e.Details["field"] != "b[0]" || e.Details["constraint"] != ConstraintMaxDepth {
		t.Fatalf("got %v", e)
	}
}

// The messages say what to do and echo no raw invalid bytes.
func TestCheckMessages(t *testing.T) {
	t.Parallel()
	e := Check([]byte("{\"content\":\"\xff\"}"), 0)
	if !strings.Contains(e.Message, "content is not valid UTF-8") || !strings.Contains(e.Message, "0xff") {
		t.Fatalf("message %q", e.Message)
	}
	e = Check([]byte(`{"content":"\ud800"}`), 0)
	if !strings.Contains(e.Message, `\uD800`) {
		t.Fatalf("message %q", e.Message)
	}
	e = Check([]byte(`[[[]]]`), 2)
	if !strings.Contains(e.Message, "deeper than 2 levels") {
		t.Fatalf("message %q", e.Message)
	}
}

// A passing document costs no allocation: the host runs Check on every call.
func TestCheckDoesNotAllocate(t *testing.T) {
	doc := []byte(`{"task_id":"T-1","type":"decision","content":"héllo \ud83d\ude00 \"q\"","tags":["a","b",{"x":[1,2.5e3,null,true]}]}`)
	if n := testing.AllocsPerRun(100, func() { _ = Check(doc, 64) }); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

func BenchmarkCheck(b *testing.B) {
	doc := []byte(`{"task_id":"T-1","type":"decision","content":"` + strings.Repeat("héllo wörld ✓ ", 300) + `","tests_run":["go test ./..."],"metadata":{"pr":7,"a":{"b":[1,2,3]}}}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if e := Check(doc, 64); e != nil {
			b.Fatal(e)
		}
	}
}
