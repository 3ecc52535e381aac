package skillsext

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestIsSkillURI(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]bool{
		"skill://cairn-demo/SKILL.md":      true,
		"skill://acme/billing/SKILL.md":    true,
		"skill:///SKILL.md":                false,
		"skill://SKILL.md":                 false,
		"skill://cairn-demo//SKILL.md":     false,
		"skill://cairn-demo/README.md":     false,
		"cairn://cairn-demo/SKILL.md":      false,
		"skill://cairn-demo/SKILL.md/more": false,
	} {
		if got := IsSkillURI(uri); got != want {
			t.Errorf("IsSkillURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

// The entry is the file's own: its digest and size are of the bytes given,
// and its frontmatter is every field of the YAML, verbatim (SEP-2640).
func TestEntryIsTheFilesOwn(t *testing.T) {
	t.Parallel()
	source := "---\r\nname: cairn-demo\nversion: \"1.0.0\"\ndescription: Use it.\ncapabilities:\n  - one\nmetadata:\n  count: 3\n  when: 2026-01-02\n---   \n\n# Demo\n"
	e, err := Entry("skill://cairn-demo/SKILL.md", []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(source))
	if len(e.Resources) != 1 || e.Resources[0] != (Resource{URI: e.URI, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(source)}) {
		t.Errorf("resources %+v", e.Resources)
	}
	var fm map[string]any
	if err := json.Unmarshal(e.Frontmatter, &fm); err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":["one"],"description":"Use it.","metadata":{"count":3,"when":"2026-01-02"},"name":"cairn-demo","version":"1.0.0"}`
	if got, _ := json.Marshal(fm); string(got) != want {
		t.Errorf("frontmatter %s, want %s", got, want)
	}
	raw, _ := json.Marshal(e)
	var shape map[string]any
	_ = json.Unmarshal(raw, &shape)
	for _, k := range []string{"uri", "frontmatter", "resources"} {
		if _, ok := shape[k]; !ok {
			t.Errorf("entry %s has no %s", raw, k)
		}
	}
}

// A file that breaks a rule of the extension is refused with a typed error
// naming the field, never served half right.
func TestEntryRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ uri, source, field string }{
		"not a skill URI": {"skill://cairn-demo/README.md", "---\nname: cairn-demo\ndescription: d\n---\n", "uri"},
		"no frontmatter":  {"skill://cairn-demo/SKILL.md", "# Demo\n", "frontmatter"},
		"unclosed":        {"skill://cairn-demo/SKILL.md", "---\nname: cairn-demo\n", "frontmatter"},
		"not a mapping":   {"skill://cairn-demo/SKILL.md", "---\n- a\n---\n", "frontmatter"},
		"empty":           {"skill://cairn-demo/SKILL.md", "---\n---\n", "frontmatter"},
		"complex key":     {"skill://cairn-demo/SKILL.md", "---\nname: cairn-demo\ndescription: d\n? [a]\n: x\n---\n", "frontmatter"},
		"no JSON form":    {"skill://cairn-demo/SKILL.md", "---\nname: cairn-demo\ndescription: d\nlimit: .inf\n---\n", "frontmatter"},
		"no name":         {"skill://cairn-demo/SKILL.md", "---\ndescription: d\n---\n", "name"},
		"other name":      {"skill://cairn-demo/SKILL.md", "---\nname: cairn-other\ndescription: d\n---\n", "name"},
		"bad name":        {"skill://Cairn--Demo/SKILL.md", "---\nname: Cairn--Demo\ndescription: d\n---\n", "name"},
		"no description":  {"skill://cairn-demo/SKILL.md", "---\nname: cairn-demo\ndescription: \"  \"\n---\n", "description"},
	} {
		_, err := Entry(c.uri, []byte(c.source))
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidInput || e.Details["field"] != c.field {
			t.Errorf("%s: %v; want ERR_INVALID_INPUT naming %s", name, err, c.field)
		}
	}
}
