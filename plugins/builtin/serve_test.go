package builtin

import "testing"

func TestServeMainTakesOnlyItsHiddenArgument(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"serve"}, {ServeArg}, {ServeArg, "core", "extra"}, {"core", ServeArg}} {
		if status, served := ServeMain(args); served || status != 0 {
			t.Errorf("ServeMain(%q) = %d, %v; want it left to the caller", args, status, served)
		}
	}
	if status, served := ServeMain([]string{ServeArg, "no-such-area"}); !served || status != 2 {
		t.Errorf("an unknown area: %d, %v; want status 2", status, served)
	}
}
