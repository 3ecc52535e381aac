package engine

import (
	"strings"
	"testing"
)

// TestValidateMissingEachSection builds, for every content type, a passing
// document in both accepted forms (<tag> blocks and ## headings) and then
// one document per required section with only that section removed.
func TestValidateMissingEachSection(t *testing.T) {
	t.Parallel()
	forms := map[string]func(name string) string{
		"tag": func(name string) string {
			n := sectionNorm(name)
			return "<" + n + ">\nsome text\n</" + n + ">\n"
		},
		"heading": func(name string) string { return "## " + name + "\nsome text\n\n" },
	}
	for typ, sections := range requiredSections {
		for formName, render := range forms {
			full := "# Document\n\n"
			for _, s := range sections {
				full += render(s)
			}
			res, err := ValidateContent(full, typ)
			if err != nil || !res.Valid || len(res.Missing) != 0 {
				t.Fatalf("%s/%s: complete document rejected: %+v %v\n%s", typ, formName, res, err, full)
			}
			for i, skip := range sections {
				doc := "# Document\n\n"
				for j, s := range sections {
					if j != i {
						doc += render(s)
					}
				}
				res, err := ValidateContent(doc, typ)
				if err != nil {
					t.Fatal(err)
				}
				if res.Valid || strings.Join(res.Missing, "|") != skip {
					t.Errorf("%s/%s without %q: valid=%v missing=%v", typ, formName, skip, res.Valid, res.Missing)
				}
				r, err := (&Engine{}).ValidateTool(ValidateInput{Content: doc, Type: typ})
				if err != nil || !strings.HasPrefix(r.Text, "DOCTRINE VIOLATIONS") || !strings.Contains(r.Text, skip) {
					t.Errorf("%s/%s without %q: text %v %v", typ, formName, skip, r, err)
				}
			}
		}
	}
}

// A level-one heading or a section named only inside a code fence does not
// count: the doctrine wants real sections.
func TestValidateIgnoresTitlesAndFences(t *testing.T) {
	t.Parallel()
	doc := "# Objective\n```\n## Context\n```\n<tasks>t</tasks>\n## Verification\nv\n## Success Criteria\ns\n"
	res, err := ValidateContent(doc, "plan")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Missing, "|") != "objective|context" {
		t.Fatalf("missing = %v", res.Missing)
	}
}
