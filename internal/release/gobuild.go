package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// VersionVar is the variable the linker sets to the version, the one
// `cairn --version` prints (the Makefile's LDFLAGS set it the same way).
const VersionVar = "github.com/cairn-mcp/cairn/host.Version"

// MainPackage is the cairn command: one binary that runs the built-in areas
// as processes of itself (docs/architecture.md, Processes).
const MainPackage = "./host/cmd/cairn"

// BuildBinary compiles cairn for t into dir/cairn and returns its path.
// The binary is static (no cgo, so it cross-compiles and runs without a C
// library of a given version), carries no build paths (-trimpath) and no
// symbol tables (-s -w), and says version.
func BuildBinary(ctx context.Context, goCmd, repo, dir string, t Target, version string) (string, error) {
	out := filepath.Join(dir, "cairn")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath",
		"-ldflags", fmt.Sprintf("-s -w -X %s=%s", VersionVar, version),
		"-o", out, MainPackage)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build cairn for %s: %v\n%s", t, err, stderr.Bytes())
	}
	return out, nil
}
