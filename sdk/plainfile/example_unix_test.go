//go:build unix

package plainfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// A second hard link to a file makes Check refuse it: the other name may
// be outside the workspace. (Unix only: elsewhere
// the platform does not say.)
func ExampleLinkCount() {
	root, done := workspace()
	defer done()

	if err := os.Link(filepath.Join(root.Name(), "notes.txt"), filepath.Join(root.Name(), "alias.txt")); err != nil {
		fmt.Println(err)
		return
	}
	fi, _ := root.Stat("notes.txt")
	n, ok := plainfile.LinkCount(fi)
	fmt.Println(n, ok, errors.Is(plainfile.Check(fi), plainfile.ErrHardLinked))
	// Output: 2 true true
}
