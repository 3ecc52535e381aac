package skills_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
)

func TestParse(t *testing.T) {
	t.Parallel()
	m, err := skills.Parse([]byte("---\nname: cairn-x\nversion: \" 1.0.0 \"\ndescription: >\n  Folded\n  text.\ncapabilities: [a, b-c]\nlicense: MIT\n---\nbody\n---\nnot frontmatter\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "cairn-x" || m.Version != "1.0.0" || m.Description != "Folded text." || !slices.Equal(m.Capabilities, []string{"a", "b-c"}) {
		t.Fatalf("got %+v", m)
	}
	// A number-looking version keeps its text.
	m, err = skills.Parse([]byte("---\nversion: 1.10\ndescription: x\n---\n"))
	if err != nil || m.Version != "1.10" {
		t.Fatalf("got %+v, %v", m, err)
	}
	if m.Capabilities == nil {
		t.Fatal("capabilities nil; want empty slice")
	}
	if _, err := skills.Parse([]byte("---\nversion: 1\ndescription: " + strings.Repeat("x", skills.MaxFileSize) + "\n---\n")); err == nil {
		t.Fatal("oversized file accepted")
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"---\nversion: 1.0.0\ndescription: x\ncapabilities: [a]\n---\n",
		"---\nversion: 1\ndescription: x\narguments: [{name: a, required: true}, {name: 9}]\n---\n",
		"---\r\nversion: 1\r\ndescription: y\r\n---\r\n",
		"---\n---\n",
		"---\nversion: &a [*a]\n---\n",
		"---\n? [a, b]\n: c\n---\n",
		"---\nversion: !!binary aGk=\ndescription: z\n---\n",
		"",
		"---",
		"\ufeff---\nversion: 1\ndescription: d\ncapabilities:\n  - ~\n---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := skills.Parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if m.Version == "" || m.Description == "" || m.Capabilities == nil {
			t.Fatalf("accepted incomplete metadata %+v", m)
		}
		for _, c := range m.Capabilities {
			if strings.TrimSpace(c) == "" || c != strings.TrimSpace(c) {
				t.Fatalf("accepted bad capability %q", c)
			}
		}
	})
}
