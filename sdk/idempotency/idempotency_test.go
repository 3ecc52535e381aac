package idempotency

import (
	"bytes"
	"testing"
)

func TestCanonicalGivesOneEncodingPerValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{`{"a":1,"b":[true,null,"x"]}`, "{ \"b\" : [ true , null , \"x\" ] , \"a\" : 1 }"},
		{`{"n":1}`, `{"n":1.0}`},
		{`{"n":100}`, `{"n":1e2}`},
		{`{"s":"<&>"}`, `{"s":"\u003c\u0026\u003e"}`},
		{`{"s":"é"}`, `{"s":"\u00e9"}`},
		{`{"o":{"z":1,"a":{"y":2,"b":3}}}`, `{"o":{"a":{"b":3,"y":2},"z":1}}`},
	} {
		a, err := canonicalJSON([]byte(tc.a))
		if err != nil {
			t.Fatal(err)
		}
		b, err := canonicalJSON([]byte(tc.b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s → %s, %s → %s; want one encoding", tc.a, a, tc.b, b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{`{"n":1}`, `{"n":2}`},
		{`{"n":1}`, `{"n":"1"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"n":0.1}`, `{"n":0.10000000000000002}`},
		{`{"n":12345678901234567890123}`, `{"n":12345678901234567890124}`},
	} {
		a, _ := canonicalJSON([]byte(tc.a))
		b, _ := canonicalJSON([]byte(tc.b))
		if bytes.Equal(a, b) {
			t.Errorf("%s and %s encode alike as %s; they are different values", tc.a, tc.b, a)
		}
	}
	if _, err := canonicalJSON([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Error("two values accepted as one")
	}
}

func TestFingerprintNamesToolArgumentsAndKey(t *testing.T) {
	t.Parallel()
	base := Key{Key: "k"}.For("task_create", []byte(`{"title":"a"}`))
	if !bytes.Equal(base.Fingerprint(), Key{Key: "k"}.For("task_create", []byte(` {"title" : "a"} `)).Fingerprint()) {
		t.Error("the same call encoded otherwise has another fingerprint")
	}
	for name, other := range map[string]Key{
		"tool":      Key{Key: "k"}.For("task_update", []byte(`{"title":"a"}`)),
		"arguments": Key{Key: "k"}.For("task_create", []byte(`{"title":"b"}`)),
		"key":       Key{Key: "k2"}.For("task_create", []byte(`{"title":"a"}`)),
	} {
		if bytes.Equal(base.Fingerprint(), other.Fingerprint()) {
			t.Errorf("another %s, the same fingerprint", name)
		}
	}
	if len(base.ID()) != 32 || bytes.Equal(base.ID(), Key{Key: "k2"}.ID()) {
		t.Error("IDs of two keys collide or are not 32 bytes")
	}
	if (Key{Key: "k", Client: true}).Hold() != ClientHold || (Key{Key: "k"}).Hold() != DerivedHold {
		t.Error("holds")
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1.5,"x",null,{"c":true}]}`))
	f.Add([]byte(`{"n":1e400}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := canonicalJSON(raw)
		if err != nil {
			return
		}
		again, err := canonicalJSON(c)
		if err != nil || !bytes.Equal(c, again) {
			t.Fatalf("canonical form %s is not a fixed point: %s %v", c, again, err)
		}
	})
}
