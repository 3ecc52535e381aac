package e2e

import (
	"os/exec"
)

func newCmd(w *workspace, args ...string) *exec.Cmd {
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append([]string{}, w.env...)
	cmd.Dir = w.root
	return cmd
}
