package release

import (
	"runtime"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Target is one platform a release builds cairn for.
type Target struct {
	OS   string
	Arch string
}

// String is the target as release file names spell it: linux_amd64.
func (t Target) String() string { return t.OS + "_" + t.Arch }

// Targets are the platforms of a release: the host needs a Unix (process
// groups, Unix sockets), and these four are where agents run.
var Targets = []Target{
	{"darwin", "amd64"},
	{"darwin", "arm64"},
	{"linux", "amd64"},
	{"linux", "arm64"},
}

// HostTarget is the platform this process runs on.
func HostTarget() Target { return Target{runtime.GOOS, runtime.GOARCH} }

// ParseTargets reads a comma-separated list of os/arch (or os_arch) pairs,
// each one of Targets; "host" names HostTarget and "all" (or nothing) every
// target.
func ParseTargets(list string) ([]Target, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return slices.Clone(Targets), nil
	}
	var out []Target
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		t := HostTarget()
		if item != "host" {
			osName, arch, ok := strings.Cut(strings.ReplaceAll(item, "_", "/"), "/")
			if !ok {
				return nil, errs.Invalidf("targets", "os/arch", "target %q is not os/arch (e.g. linux/amd64)", item)
			}
			t = Target{osName, arch}
		}
		if !slices.Contains(Targets, t) {
			return nil, errs.Invalidf("targets", "supported", "target %s is not one a release builds (%s)", t, targetNames())
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func targetNames() string {
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = t.OS + "/" + t.Arch
	}
	return strings.Join(names, ", ")
}
