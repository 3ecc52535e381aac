package importedtext

import "testing"

func TestMarkersReadBackWhatTheyWrite(t *testing.T) {
	t.Parallel()
	d := "the beginning" + DescriptionMarker(13, 18000)
	kept, k, w, ok := CutDescription(d)
	if !ok || kept != "the beginning" || k != 13 || w != 18000 {
		t.Fatalf("CutDescription(%q) = %q %d %d %v", d, kept, k, w, ok)
	}
	for _, s := range []string{"plain text", "x" + DescriptionMarker(1, 2) + " and more", ""} {
		if _, _, _, ok := CutDescription(s); ok {
			t.Errorf("CutDescription(%q) found a marker", s)
		}
	}
	field, i, n, text, ok := Part(PartHeading("description", 2, 3) + "middle")
	if !ok || field != "description" || i != 2 || n != 3 || text != "middle" {
		t.Fatalf("Part = %q %d %d %q %v", field, i, n, text, ok)
	}
	for _, c := range []string{"imported text: notes (part 1 of 1)\n\nx", "imported text: title (part 3 of 2)\n\nx", "a decision", PartHeading("title", 0, 1)} {
		if _, _, _, _, ok := Part(c); ok {
			t.Errorf("Part(%q) read a heading", c)
		}
	}
}
