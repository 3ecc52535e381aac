package backlogmd

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/importedtext"
)

// cutAsImported cuts text as the core area's import does, in the shapes
// of internal/importedtext: a description of 8000 characters ending in its
// marker, and the trail records of the whole text, parts of at most size
// characters.
func cutAsImported(field, text string, keep, size int, from int) (string, []Record) {
	runes := []rune(text)
	var cut string
	if field == "title" {
		cut = string(runes[:maxTitleLen-utf8.RuneCountInString(importedtext.TitleMarker)]) + importedtext.TitleMarker
	} else {
		cut = string(runes[:keep]) + importedtext.DescriptionMarker(keep, len(runes))
	}
	var recs []Record
	n := (len(runes) + size - 1) / size
	for i := range n {
		part := string(runes[i*size : min(len(runes), (i+1)*size)])
		recs = append(recs, Record{Content: importedtext.PartHeading(field, i+1, n) + part, ChainPosition: from + i})
	}
	return cut, recs
}

func TestCutFieldsAreTheMarkedOnes(t *testing.T) {
	t.Parallel()
	desc, _ := cutAsImported("description", strings.Repeat("é", 18000), 7800, 4960, 1)
	title, _ := cutAsImported("title", strings.Repeat("t", 300), 0, 4960, 1)
	cases := []struct {
		t    Task
		want []string
	}{
		{Task{Title: "plain", Description: "plain"}, nil},
		{Task{Title: "short ends like a cut one […]", Description: "says \"imported text: description\""}, nil},
		{Task{Title: title, Description: desc}, []string{"title", "description"}},
		{Task{Title: "a", Description: desc + " "}, nil},
		{Task{Title: "a", Description: desc}, []string{"description"}},
	}
	for i, c := range cases {
		if got := CutFields(c.t); !slices.Equal(got, c.want) {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestWholePutsBackTheTrailsText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; b.Len() < 18000; i++ {
		fmt.Fprintf(&b, "line %d: Zoë 日本 ", i)
	}
	whole := b.String()
	longTitle := strings.Repeat("Ω title ", 50)
	cutDesc, descRecs := cutAsImported("description", whole, 7800, 4960, 10)
	cutTitle, titleRecs := cutAsImported("title", longTitle, 0, 4960, 5)
	// An older import of another text, an unfinished run and notes of
	// agents share the trail; the records come in any order.
	_, older := cutAsImported("description", "other "+whole, 7800, 4960, 1)
	trail := append(append(append([]Record{}, descRecs...), older...), titleRecs...)
	trail = append(trail,
		Record{Content: "imported text: description (part 1 of 3)\n\nnever finished", ChainPosition: 30},
		Record{Content: "a note of an agent", ChainPosition: 31},
		Record{Content: "imported text: description (part 2 of 2)\n\nout of its run", ChainPosition: 32})
	slices.Reverse(trail)
	in := Task{TaskID: "T-1", Title: cutTitle, Description: cutDesc}
	got := Whole(in, trail)
	if got.Description != whole {
		t.Fatalf("description: %d characters, want the whole %d", utf8.RuneCountInString(got.Description), utf8.RuneCountInString(whole))
	}
	if got.Title != longTitle {
		t.Fatalf("title %q", got.Title)
	}
	if len(CutFields(got)) != 0 {
		t.Fatalf("the whole task still reads as cut: %v", CutFields(got))
	}

	// A trail without the whole text leaves the cut text as it is.
	if got := Whole(in, older); got.Description != cutDesc || got.Title != cutTitle {
		t.Fatalf("a trail of another text changed the task: %.60q", got.Description)
	}
	if got := Whole(in, descRecs[:2]); got.Description != cutDesc {
		t.Fatal("a trail missing a part changed the task")
	}
	if got := Whole(in, nil); got.Title != in.Title || got.Description != in.Description {
		t.Fatal("an empty trail changed the task")
	}
}

// A board of tasks without a marker is what it was: Whole leaves them
// alone whatever the trail.
func TestWholeLeavesUncutTasks(t *testing.T) {
	t.Parallel()
	_, recs := cutAsImported("description", strings.Repeat("x", 9000), 7800, 4960, 1)
	in := Task{TaskID: "T-2", Title: "a", Description: "short"}
	if got := Whole(in, recs); got.Title != in.Title || got.Description != in.Description {
		t.Fatalf("%+v", got)
	}
}

// What finding the cut tasks costs an export of tasks without a marker.
func BenchmarkCutFieldsUncut(b *testing.B) {
	t := Task{Title: strings.Repeat("title ", 20), Description: strings.Repeat("a description line\n", 200)}
	for b.Loop() {
		if CutFields(t) != nil {
			b.Fatal("cut")
		}
	}
}
