package ui

import "testing"

// The templates are parsed on the first page served; a broken template must
// still fail the tests rather than the first visitor.
func TestPageTemplatesParse(t *testing.T) {
	m, err := pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pageNames {
		if m[name] == nil || m[name].Lookup(name+".html") == nil {
			t.Errorf("page %s: template %s.html not parsed with the layout", name, name)
		}
	}
}
