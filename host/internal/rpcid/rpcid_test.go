package rpcid

import (
	"encoding/json"
	"testing"
)

func TestKeyAndValid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		key  string
		want bool
	}{
		{`1`, "n1", true}, {`-42`, "n-42", true}, {`0`, "n0", true},
		{`"a"`, "sa", true}, {`"a\u003cb"`, "sa<b", true}, {`"a<b"`, "sa<b", true}, {`""`, "s", true},
		{`9007199254740991`, "n9007199254740991", true}, {`-9007199254740991`, "n-9007199254740991", true},
		{`9007199254740992`, "", false}, {`1.0`, "", false}, {`1e3`, "", false}, {`-0`, "", false}, {`01`, "", false},
		{`null`, "", false}, {`[1]`, "", false}, {`{}`, "", false}, {`true`, "", false}, {``, "", false},
	} {
		key, ok := Key(json.RawMessage(tc.raw))
		if ok != tc.want || key != tc.key {
			t.Errorf("Key(%s) = %q, %v; want %q, %v", tc.raw, key, ok, tc.key, tc.want)
		}
		if v := Valid(json.RawMessage(tc.raw)); v != tc.want {
			t.Errorf("Valid(%s) = %v, want %v", tc.raw, v, tc.want)
		}
	}
	if Decode(json.RawMessage(`"x"`)) != "x" || Decode(json.RawMessage(`7`)) != int64(7) {
		t.Error("Decode")
	}
}
