package trail

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// The differential tests below feed the same inputs to this package and to
// node's JSON.stringify and compare bytes. Inputs travel to node as JSON made
// by encoding/json (independent of the encoder under test) and results come
// back hex-encoded, so no shell or terminal encoding is involved.

const nodeScript = `
const crypto = require('crypto');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', d => input += d);
process.stdin.on('end', () => {
  const cases = JSON.parse(input);
  const out = cases.map(c => {
    let s;
    if (c.kind === 'fields') {
      const f = c.fields;
      s = JSON.stringify({task_id: f.task_id, type: f.type, content: f.content,
        previous_hash: f.previous_hash === '' ? null : f.previous_hash,
        recorded_at: f.recorded_at, recorded_by: f.recorded_by});
    } else if (c.kind === 'raw') {
      s = JSON.stringify(JSON.parse(c.text));
    } else if (c.kind === 'number') {
      s = JSON.stringify(Buffer.from(c.bits, 'hex').readDoubleBE(0));
    }
    const b = Buffer.from(s, 'utf8');
    return {hex: b.toString('hex'), sha: crypto.createHash('sha256').update(b).digest('hex')};
  });
  process.stdout.write(JSON.stringify(out));
});
`

type nodeCase struct {
	Kind   string  `json:"kind"`
	Fields *Fields `json:"fields,omitempty"`
	Text   string  `json:"text,omitempty"`
	Bits   string  `json:"bits,omitempty"`
}

type nodeResult struct {
	Hex string `json:"hex"`
	Sha string `json:"sha"`
}

func runNode(t *testing.T, cases []nodeCase) []nodeResult {
	t.Helper()
	nodePath, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; skipping the JSON.stringify differential test")
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodePath, "-e", nodeScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	var res []nodeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node output: %v", err)
	}
	if len(res) != len(cases) {
		t.Fatalf("node returned %d results for %d cases", len(res), len(cases))
	}
	return res
}

// interestingStrings covers every escaping rule of JSON.stringify.
func interestingStrings() []string {
	s := []string{
		"", "plain", `quote " inside`, `back\slash`, `\"`, `"\\"`,
		"<script>alert('x')</script> & co", "line\u2028sep\u2029para",
		"del\u007fete", "emoji 😀 and 👩‍💻 and 🏳️‍🌈", "𝄞 music, 𐍈 gothic",
		"Ελληνικά, русский, 中文, 日本語, العربية, עברית, हिन्दी",
		"\ufeffbom", "\ufffd replacement", "\u0080\u009f C1 controls", "\u00e9\u0301",
		"tab\there\nnewline\r\nCRLF\bback\fform",
		"Θ-12", "T-1",
	}
	var all strings.Builder
	for c := 0; c < 0x20; c++ {
		s = append(s, string(rune(c)), "a"+string(rune(c))+"b")
		all.WriteByte(byte(c))
	}
	s = append(s, all.String())
	return s
}

// randomString draws from code point classes that stress the encoder.
func randomString(r *rand.Rand) string {
	n := r.IntN(40)
	var b strings.Builder
	for i := 0; i < n; i++ {
		var c rune
		switch r.IntN(9) {
		case 0:
			c = rune(r.IntN(0x20))
		case 1:
			c = rune(`"\<>&/'`[r.IntN(7)])
		case 2:
			c = rune(0x20 + r.IntN(0x60))
		case 3:
			c = rune(0x7f + r.IntN(0x800-0x7f))
		case 4:
			c = []rune{0x2028, 0x2029, 0xfeff, 0xfffd, 0xffff, 0xd7ff, 0xe000}[r.IntN(7)]
		case 5:
			c = rune(0x800 + r.IntN(0xd800-0x800))
		case 6:
			c = rune(0xe000 + r.IntN(0x10000-0xe000))
		default:
			c = rune(0x10000 + r.IntN(0x110000-0x10000))
		}
		b.WriteRune(c)
	}
	return b.String()
}

func TestStringifyMatchesNode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var cases []nodeCase
	var fields []Fields
	for _, s := range interestingStrings() {
		fields = append(fields,
			Fields{TaskID: "T-1", Type: "decision", Content: s, RecordedAt: "2026-11-22T08:40:12.123Z", RecordedBy: "agent"},
			Fields{TaskID: s, Type: s, Content: s, PreviousHash: s, RecordedAt: s, RecordedBy: s})
	}
	for i := 0; i < 2000; i++ {
		f := Fields{TaskID: "T-" + randomString(r), Type: randomString(r), Content: randomString(r),
			RecordedAt: randomString(r), RecordedBy: randomString(r)}
		if i%2 == 1 {
			f.PreviousHash = randomString(r)
		}
		fields = append(fields, f)
	}
	for i := range fields {
		cases = append(cases, nodeCase{Kind: "fields", Fields: &fields[i]})
	}
	res := runNode(t, cases)
	for i, f := range fields {
		got, err := f.Canonical()
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if hex.EncodeToString(got) != res[i].Hex {
			want, _ := hex.DecodeString(res[i].Hex)
			t.Fatalf("case %d (%+q):\n got %q\nwant %q", i, f.Content, got, want)
		}
		h, _ := HashRecord(f)
		if h != res[i].Sha {
			t.Fatalf("case %d: hash %s, node %s", i, h, res[i].Sha)
		}
	}
}

func TestRawAndNumbersMatchNode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{
		`{"b":1,"a":2}`, `{"10":1,"2":2,"a":3,"1":4,"01":5,"-1":6,"4294967294":7,"4294967295":8}`,
		`{"a":1,"b":2,"a":3}`, `{"x":{"y":[1,2,{"z":null}]},"t":true,"f":false}`,
		`[1e21,1e-7,123456789012345678901234,0.1,-0,-0.0,5e-324,1.7976931348623157e308,1e400,-1e400,100,1.5e3]`,
		`"<>&\u2028\u2029\u007f\u0000\u001f\ud83d\ude00"`,
		` { "spaced" : [ 1 , 2 ] } `, `{"":"empty key","\n":"newline key"}`,
		`12345678901234567890`, `0.000001`, `0.0000001`, `123e-20`, `[]`, `{}`,
	}
	for i := 0; i < 300; i++ {
		v := randomJSON(r, 0)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	var cases []nodeCase
	for _, s := range texts {
		cases = append(cases, nodeCase{Kind: "raw", Text: s})
	}
	nums := []float64{0, 1, -1, 0.1, 1e21, 1e20, 123e19, 1e-6, 1e-7, 1.5e-7, 5e-324, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 0.30000000000000004, 100, 1234.5678, -2.5e-10,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1)}
	for i := 0; i < 3000; i++ {
		var f float64
		switch i % 3 {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1:
			f = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(60)-30))
		default:
			f = float64(r.Int64N(1<<62)) * float64(1-2*r.IntN(2))
		}
		nums = append(nums, f)
	}
	for _, f := range nums {
		var bits [8]byte
		binary.BigEndian.PutUint64(bits[:], math.Float64bits(f))
		cases = append(cases, nodeCase{Kind: "number", Bits: hex.EncodeToString(bits[:])})
	}
	res := runNode(t, cases)
	for i, s := range texts {
		got, err := Stringify(json.RawMessage(s))
		if err != nil {
			t.Fatalf("raw %q: %v", s, err)
		}
		want, _ := hex.DecodeString(res[i].Hex)
		if got != string(want) {
			t.Fatalf("raw %q:\n got %s\nwant %s", s, got, want)
		}
	}
	for j, f := range nums {
		got := string(AppendNumber(nil, f))
		want, _ := hex.DecodeString(res[len(texts)+j].Hex)
		if got != string(want) {
			t.Fatalf("number %v (bits %x): got %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
}

// randomJSON builds a value of the shapes event content takes.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth > 3 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
	case 3:
		return randomString(r)
	case 4:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomJSON(r, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for i := r.IntN(5); i > 0; i-- {
			key := randomString(r)
			if r.IntN(3) == 0 {
				key = []string{"0", "1", "10", "2", "01", "x"}[r.IntN(6)]
			}
			m[key] = randomJSON(r, depth+1)
		}
		return m
	}
}

func TestStringifyGoValues(t *testing.T) {
	t.Parallel()
	type change struct {
		Status   string   `json:"status"`
		Previous string   `json:"previous_status,omitempty"`
		Progress int      `json:"progress"`
		Labels   []string `json:"labels"`
		Note     string   `json:"note"`
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"a<b>&\u2028", "\"a<b>&\u2028\""},
		{map[string]any{"b": 1, "a": []any{true, nil}, "10": "x", "9": 0.5}, `{"9":0.5,"10":"x","a":[true,null],"b":1}`},
		{Object{{"z", 1}, {"a", 2}, {"z", 3}}, `{"z":3,"a":2}`},
		{change{Status: "done", Progress: 100, Labels: []string{"x"}, Note: "<&>"}, `{"status":"done","progress":100,"labels":["x"],"note":"<&>"}`},
		{[]any{int64(1) << 60, uint8(7), float32(0.5)}, `[1152921504606847000,7,0.5]`}, // as (2**60).toString()
		{[]any{int64(1) << 60}, `[1152921504606847000]`},
		{json.Number("1.50"), `1.5`},
	} {
		got, err := Stringify(c.v)
		if err != nil {
			t.Fatalf("%#v: %v", c.v, err)
		}
		if got != c.want {
			t.Errorf("%#v:\n got %s\nwant %s", c.v, got, c.want)
		}
	}
}

func TestInvalidUTF8Refused(t *testing.T) {
	t.Parallel()
	bad := "ok\xffno"
	f := Fields{TaskID: "T-1", Type: "decision", Content: bad, RecordedAt: "x", RecordedBy: "y"}
	_, err := HashRecord(f)
	assertInvalid(t, err, "content")
	f.Content, f.RecordedBy = "fine", "\xed\xa0\x80" // an encoded surrogate
	_, err = HashRecord(f)
	assertInvalid(t, err, "recorded_by")

	type s struct{ Note string }
	for _, v := range []any{bad, []any{"x", bad}, map[string]any{bad: 1}, Object{{"k", bad}}, s{bad},
		json.RawMessage(`"` + bad + `"`), map[string][]string{"k": {bad}}} {
		_, err := Stringify(v)
		if err == nil {
			t.Errorf("%#v: accepted invalid UTF-8", v)
			continue
		}
		assertInvalid(t, err, "")
	}
}

func FuzzStringify(f *testing.F) {
	for _, s := range interestingStrings() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Stringify(s)
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("invalid UTF-8 %q accepted", s)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("%q encoded as invalid JSON %q: %v", s, got, err)
		}
		if back != s {
			t.Fatalf("%q round-tripped to %q", s, back)
		}
		// Also as a member and as content of a record.
		obj, err := Stringify(Object{{s, s}})
		if err != nil || !json.Valid([]byte(obj)) {
			t.Fatalf("object with %q: %v %q", s, err, obj)
		}
		if _, err := HashRecord(Fields{Content: s, TaskID: s}); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkHashRecord(b *testing.B) {
	f := Fields{TaskID: "T-42", Type: "decision", Content: strings.Repeat("Chose bbolt over SQLite <because> \"x\"\n", 10),
		PreviousHash: hex.EncodeToString(make([]byte, 32)), RecordedAt: "2026-11-22T08:40:12.123Z", RecordedBy: "claude-code"}
	b.ReportAllocs()
	var h hasher
	for b.Loop() {
		if _, err := h.hash(&f); err != nil {
			b.Fatal(err)
		}
	}
}
