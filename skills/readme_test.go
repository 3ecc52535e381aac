package skills

import (
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The README says how many canonical skills there are once, and says it
// right: a count repeated in prose drifts (it said 23 beside 24).
func TestReadmeSkillCount(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	counts := regexp.MustCompile(`(\d+) (?:canonical )?(?:cairn-\* )?skills`).FindAllStringSubmatch(string(b), -1)
	if len(counts) != 1 {
		t.Fatalf("the README gives the skill count %d times (%v), want once", len(counts), counts)
	}
	dirs, err := fs.Glob(FS, "cairn-*")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(counts[0][1]); n != len(dirs) {
		t.Fatalf("the README says %d canonical skills; %d are embedded", n, len(dirs))
	}
}
