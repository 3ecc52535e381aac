package skills_test

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
)

func TestParseArguments(t *testing.T) {
	t.Parallel()
	head := "---\nversion: 1\ndescription: d\n"
	for _, tc := range []struct {
		name, yaml, wantErr string
		want                []skills.Argument
	}{
		{name: "none", yaml: ""},
		{name: "one required", yaml: "arguments:\n  - name: change\n    description: \" The change \"\n    required: true\n",
			want: []skills.Argument{{Name: "change", Description: "The change", Required: true}}},
		{name: "two optional", yaml: "arguments: [{name: a}, {name: b_2}]\n",
			want: []skills.Argument{{Name: "a"}, {Name: "b_2"}}},
		{name: "bad name", yaml: "arguments: [{name: Bad-Name}]\n", wantErr: "arguments[0].name"},
		{name: "empty name", yaml: "arguments: [{description: x}]\n", wantErr: "arguments[0].name"},
		{name: "repeated", yaml: "arguments: [{name: a}, {name: a}]\n", wantErr: "repeated"},
		{name: "not a list", yaml: "arguments: yes\n", wantErr: "frontmatter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := skills.Parse([]byte(head + tc.yaml + "---\nbody\n"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v; want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Arguments) != len(tc.want) {
				t.Fatalf("arguments = %+v; want %+v", m.Arguments, tc.want)
			}
			for i := range tc.want {
				if m.Arguments[i] != tc.want[i] {
					t.Errorf("arguments[%d] = %+v; want %+v", i, m.Arguments[i], tc.want[i])
				}
			}
		})
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"---\nversion: 1\n---\n\n# Title\n\nText.\n", "# Title\n\nText."},
		{"\ufeff---\r\nversion: 1\r\n---\r\nbody\r\n", "body"},
		{"---\n---\n", ""},
		{"---\nversion: 1\n---\nfirst\n---\nsecond\n", "first\n---\nsecond"},
		{"no frontmatter", ""},
		{"---\nunclosed\n", ""},
	} {
		if got := skills.Body([]byte(tc.in)); got != tc.want {
			t.Errorf("Body(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzBody(f *testing.F) {
	for _, s := range []string{"---\na: 1\n---\nbody", "---\n---\n", "", "---", "\ufeff---\r\n---\r\nx"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body := skills.Body(data)
		if body != strings.TrimSpace(body) {
			t.Fatalf("body %q is not trimmed", body)
		}
		if len(body) > len(data) {
			t.Fatalf("body longer than the file")
		}
	})
}
