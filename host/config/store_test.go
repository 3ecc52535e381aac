package config

import (
	"strings"
	"testing"
)

func TestParseStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"bbolt", "", true},
		{" bbolt ", "", true},
		{"postgres://u:p@db:5432/cairn?sslmode=require", "postgres://u:p@db:5432/cairn?sslmode=require", true},
		{"postgresql://db/cairn", "postgresql://db/cairn", true},
		{"mysql://u:secret@db/cairn", "", false},
		{"sqlite", "", false},
	} {
		got, err := parseStore(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseStore(%q) = %q, %v; want %q (ok %v)", c.in, got, err, c.want, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseStore(%q) echoed the password: %v", c.in, err)
		}
	}
}

func TestResolveReadsStore(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CAIRN_STORE": "postgres://db/cairn"}
	s, err := Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, t.TempDir(), "")
	if err != nil || s.Store != "postgres://db/cairn" || s.StoreKind() != "postgres" {
		t.Fatalf("Resolve: store %q kind %s, %v", s.Store, s.StoreKind(), err)
	}
	env["CAIRN_STORE"] = "redis://x"
	if _, err := Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, t.TempDir(), ""); err == nil {
		t.Fatal("Resolve accepted CAIRN_STORE=redis://x")
	}
}
