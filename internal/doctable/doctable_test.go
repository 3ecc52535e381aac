package doctable

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	doc := "intro\n<!-- t -->\n| A | B |\n|---|:-:|\n| `x` | yes |\n| y | 403 `self` |\n<!-- /t -->\n| not | this |\n"
	rows, err := Parse(doc, "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"`x`", "yes"}, {"y", "403 `self`"}}; !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	for _, bad := range []string{"no marker", "<!-- t -->\n| A |\n", "<!-- t -->\n| A |\n|---|\n<!-- /t -->", "<!-- t -->\n| A |\nloose text\n<!-- /t -->"} {
		if _, err := Parse(bad, "t"); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
