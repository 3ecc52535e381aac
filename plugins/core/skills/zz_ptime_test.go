package skills_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
)

func TestZZTimes(t *testing.T) {
	cases := map[string]string{
		"nested flow":  strings.Repeat("[", 500000),
		"nested block": strings.Repeat("- ", 200000) + "x",
		"alias bomb":   "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nversion: *g\n",
		"many keys":    strings.Repeat("k: v\n", 190000),
		"long line":    "description: " + strings.Repeat("x: ", 300000),
		"many lines":   strings.Repeat("\n", 1000000),
		"caps":         "version: 1\ndescription: d\ncapabilities:\n" + strings.Repeat("  - a\n", 170000),
	}
	for name, body := range cases {
		in := "---\n" + body + "\n---\n"
		if len(in) > skills.MaxFileSize {
			in = in[:skills.MaxFileSize-5] + "\n---\n"
		}
		start := time.Now()
		_, err := skills.Parse([]byte(in))
		t.Logf("%-12s %7d bytes %v err=%v", name, len(in), time.Since(start), err != nil)
	}
}
