// Command cairn-plugin-semver is the example cairn plugin: three small tools
// that help an agent reason about semantic versions. It uses nothing but the
// cairn SDK and golang.org/x/mod/semver; copy it to start your own plugin.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/cairn-mcp/cairn/sdk"
)

// CompareInput names two versions. The jsonschema tags become the tool's
// input schema; cairn validates every call against it before the handler
// runs.
type CompareInput struct {
	A string `json:"a" jsonschema:"minLength=1,maxLength=128,description=First version (v prefix optional)"`
	B string `json:"b" jsonschema:"minLength=1,maxLength=128,description=Second version (v prefix optional)"`
}

// CompareOutput says how A relates to B.
type CompareOutput struct {
	Result   int    `json:"result" jsonschema:"enum=-1,enum=0,enum=1,description=-1 when a < b; 0 when equal; 1 when a > b"`
	Relation string `json:"relation" jsonschema:"enum=older,enum=same,enum=newer,description=a relative to b"`
}

// BumpInput asks for the next version.
type BumpInput struct {
	Version    string `json:"version" jsonschema:"minLength=1,maxLength=128"`
	Part       string `json:"part" jsonschema:"enum=major,enum=minor,enum=patch,description=Which part to increment"`
	Prerelease string `json:"prerelease,omitempty" jsonschema:"pattern=^[0-9A-Za-z.-]*$,description=Optional pre-release label such as rc.1"`
}

// BumpOutput is the bumped version.
type BumpOutput struct {
	Previous string `json:"previous"`
	Version  string `json:"version"`
}

// SortInput lists versions to order.
type SortInput struct {
	Versions   []string `json:"versions" jsonschema:"minItems=1,maxItems=1000"`
	Descending bool     `json:"descending,omitempty"`
}

// SortOutput is the ordered list; Latest is the highest release.
type SortOutput struct {
	Versions []string `json:"versions"`
	Latest   string   `json:"latest"`
}

// canonical accepts "1.2.3" or "v1.2.3" and reports a typed error naming
// the field otherwise, so the agent knows exactly what to fix.
func canonical(field, v string) (string, error) {
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !semver.IsValid(v) {
		return "", sdk.InvalidInput(field, "semver", fmt.Sprintf("%s %q is not a semantic version; use MAJOR.MINOR.PATCH such as 1.4.2", field, strings.TrimPrefix(v, "v")))
	}
	return v, nil
}

func newPlugin() *sdk.Plugin {
	p := sdk.New("semver", "1.0.0", sdk.WithDescription("Semantic-version helpers for release work"))

	sdk.AddTool(p, sdk.Tool[CompareInput, CompareOutput]{
		Name:        "semver_compare",
		Title:       "Compare versions",
		Description: "Compares two semantic versions and says whether the first is older, the same or newer.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, in CompareInput) (CompareOutput, error) {
			a, err := canonical("a", in.A)
			if err != nil {
				return CompareOutput{}, err
			}
			b, err := canonical("b", in.B)
			if err != nil {
				return CompareOutput{}, err
			}
			r := semver.Compare(a, b)
			return CompareOutput{Result: r, Relation: [...]string{"older", "same", "newer"}[r+1]}, nil
		},
	})

	sdk.AddTool(p, sdk.Tool[BumpInput, BumpOutput]{
		Name:        "semver_bump",
		Title:       "Bump version",
		Description: "Returns the next major, minor or patch version, optionally with a pre-release label.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, in BumpInput) (BumpOutput, error) {
			v, err := canonical("version", in.Version)
			if err != nil {
				return BumpOutput{}, err
			}
			var major, minor, patch int
			// Canonical drops build metadata; Sscanf reads the numeric core.
			if _, err := fmt.Sscanf(strings.SplitN(semver.Canonical(v), "-", 2)[0], "v%d.%d.%d", &major, &minor, &patch); err != nil {
				return BumpOutput{}, sdk.InvalidInput("version", "semver", "version must have a numeric MAJOR.MINOR.PATCH core")
			}
			switch in.Part {
			case "major":
				major, minor, patch = major+1, 0, 0
			case "minor":
				minor, patch = minor+1, 0
			case "patch":
				if semver.Prerelease(v) == "" {
					patch++
				}
			}
			next := fmt.Sprintf("%d.%d.%d", major, minor, patch)
			if in.Prerelease != "" {
				next += "-" + in.Prerelease
			}
			return BumpOutput{Previous: strings.TrimPrefix(v, "v"), Version: next}, nil
		},
	})

	sdk.AddTool(p, sdk.Tool[SortInput, SortOutput]{
		Name:        "semver_sort",
		Title:       "Sort versions",
		Description: "Sorts semantic versions by precedence and names the latest release (pre-releases excluded when a release exists).",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(ctx context.Context, in SortInput) (SortOutput, error) {
			vs := make([]string, len(in.Versions))
			for i, v := range in.Versions {
				c, err := canonical(fmt.Sprintf("versions[%d]", i), v)
				if err != nil {
					return SortOutput{}, err
				}
				vs[i] = c
			}
			sort.SliceStable(vs, func(i, j int) bool { return semver.Compare(vs[i], vs[j]) < 0 })
			sdk.ReportProgress(ctx, 1, 1, "sorted")
			latest := vs[len(vs)-1]
			for i := len(vs) - 1; i >= 0; i-- {
				if semver.Prerelease(vs[i]) == "" {
					latest = vs[i]
					break
				}
			}
			if in.Descending {
				for i, j := 0, len(vs)-1; i < j; i, j = i+1, j-1 {
					vs[i], vs[j] = vs[j], vs[i]
				}
			}
			out := SortOutput{Latest: strings.TrimPrefix(latest, "v")}
			for _, v := range vs {
				out.Versions = append(out.Versions, strings.TrimPrefix(v, "v"))
			}
			return out, nil
		},
	})
	return p
}

func main() {
	sdk.Serve(newPlugin())
}
