package cli

import (
	"bytes"
	"errors"
	"testing"
)

// A command line that cannot run is a usage error (exit 2); a group
// command without a verb shows its help and succeeds.
func TestStrictUsage(t *testing.T) {
	for _, c := range []struct {
		args  []string
		usage bool
	}{
		{[]string{"admin", "keys", "frobnicate"}, true},
		{[]string{"admin", "frobnicate"}, true},
		{[]string{"admin", "keys", "get"}, true},
		{[]string{"admin", "keys", "get", "a", "b"}, true},
		{[]string{"admin", "keys", "create", "--per-day", "many"}, true},
		{[]string{"admin", "keys", "list", "--no-such-flag"}, true},
		{[]string{"project", "list", "extra"}, true},
		{[]string{"version", "extra"}, true},
		{[]string{"admin", "keys"}, false},
		{[]string{"admin"}, false},
		{[]string{"version"}, false},
	} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(c.args)
		err := root.Execute()
		var u usageErr
		isUsage := errors.As(err, &u) || (err != nil && cobraUsage(err))
		if isUsage != c.usage || (!c.usage && err != nil) {
			t.Errorf("%v: error %v (usage %v), want usage %v", c.args, err, isUsage, c.usage)
		}
	}
}

// The environment is listed in the top-level help only.
func TestEnvironmentHelpOnceAtTheTop(t *testing.T) {
	help := func(args ...string) string {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if top := help(); !bytes.Contains([]byte(top), []byte("CAIRN_DATA_DIR")) {
		t.Fatalf("top-level help lacks the environment:\n%s", top)
	}
	for _, args := range [][]string{{"admin"}, {"admin", "keys", "create"}, {"serve"}, {"project", "list"}} {
		if h := help(args...); bytes.Contains([]byte(h), []byte("CAIRN_DATA_DIR")) {
			t.Errorf("%v help repeats the environment:\n%s", args, h)
		}
	}
}
