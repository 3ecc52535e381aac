package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/buildid"
)

// VersionVar is the variable the linker sets to the version, the one
// `cairn --version` prints (the Makefile's LDFLAGS set it the same way).
const VersionVar = "github.com/cairn-mcp/cairn/host.Version"

// MainPackage is the cairn command, the one binary a user runs.
const MainPackage = "./host/cmd/cairn"

// AreasPackage is cairn-areas, which runs the built-in areas for the cairn
// beside it (docs/architecture.md, Processes).
const AreasPackage = "./plugins/builtin/cmd/cairn-areas"

// AreasIDVar is the variable of cairn the linker sets to the build ID of
// the cairn-areas built with it.
const AreasIDVar = "github.com/cairn-mcp/cairn/host/fleet.areasBuildID"

// Binaries are the executables of one target's build.
type Binaries struct {
	// Cairn and Areas are the paths of cairn and cairn-areas.
	Cairn, Areas string
}

// BuildBinaries compiles cairn-areas, then cairn naming its build ID, for t
// into dir. Both are static (no cgo, so they cross-compile and run without
// a C library of a given version), carry no build paths (-trimpath) and no
// symbol tables (-s -w), and say version.
func BuildBinaries(ctx context.Context, goCmd, repo, dir string, t Target, version string) (Binaries, error) {
	b := Binaries{Cairn: filepath.Join(dir, "cairn"), Areas: filepath.Join(dir, "cairn-areas")}
	ldflags := fmt.Sprintf("-s -w -X %s=%s", VersionVar, version)
	if err := goBuild(ctx, goCmd, repo, t, ldflags, b.Areas, AreasPackage); err != nil {
		return b, err
	}
	id, err := buildid.Read(b.Areas)
	if err != nil {
		return b, err
	}
	return b, goBuild(ctx, goCmd, repo, t, ldflags+fmt.Sprintf(" -X %s=%s", AreasIDVar, id), b.Cairn, MainPackage)
}

// goBuild builds pkg for t into out.
func goBuild(ctx context.Context, goCmd, repo string, t Target, ldflags, out, pkg string) error {
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s for %s: %v\n%s", filepath.Base(out), t, err, stderr.Bytes())
	}
	return nil
}
