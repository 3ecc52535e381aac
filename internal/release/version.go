package release

import (
	"regexp"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// semver is Semantic Versioning 2.0.0's grammar (semver.org), which the MCP
// bundle, the registry's server.json and the Claude Code plugin all ask
// of a version.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// Version is the release version for raw, the Makefile's VERSION (git
// describe): a leading "v" of the tag is dropped, and what is left must be
// semver, since every package format of a release needs one. `git
// describe` of a commit past a tag ("1.2.0-3-gabc1234-dirty") is a semver
// pre-release; a bare commit hash (a repository without tags) is not.
func Version(raw string) (string, error) {
	v := strings.TrimPrefix(strings.TrimSpace(raw), "v")
	if !semver.MatchString(v) {
		return "", errs.Invalidf("version", "semver",
			"version %q is not semver (MAJOR.MINOR.PATCH[-pre][+build]): tag the commit (git tag v0.2.0) or pass VERSION=0.2.0", raw)
	}
	return v, nil
}
