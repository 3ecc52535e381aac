package release

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// MetaFile is where a release's descriptive fields live, relative to the
// repository root: data the bundle, the registry entry and the plugin
// share, edited without touching the builder.
const MetaFile = "packaging/release.json"

// Meta says what cairn is to the catalogs that list it.
type Meta struct {
	Name            string   `json:"name"`
	DisplayName     string   `json:"display_name"`
	Description     string   `json:"description"`
	LongDescription string   `json:"long_description"`
	Author          Author   `json:"author"`
	Homepage        string   `json:"homepage"`
	Repository      string   `json:"repository"`
	License         string   `json:"license"`
	Keywords        []string `json:"keywords"`
	// RegistryName is the MCP registry's name of the server, reverse DNS
	// of the namespace its publisher proves (io.github.<owner>/<name>).
	RegistryName string `json:"registry_name"`
	// DownloadURL is where a published release file is fetched from, with
	// {version} and {file} to fill in: server.json names each bundle so.
	DownloadURL string `json:"download_url"`
}

// Author is the author object of the bundle and plugin manifests.
type Author struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// LoadMeta reads and checks path.
func LoadMeta(path string) (Meta, error) {
	var m Meta
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, errs.Invalidf("meta", "json", "%s: %v", path, err)
	}
	return m, m.check(path)
}

func (m Meta) check(path string) error {
	required := map[string]string{"name": m.Name, "description": m.Description, "author.name": m.Author.Name,
		"registry_name": m.RegistryName, "download_url": m.DownloadURL}
	for field, v := range required {
		if strings.TrimSpace(v) == "" {
			return errs.Invalidf(field, "required", "%s: %s is empty", path, field)
		}
	}
	// The registry refuses a longer description.
	if len(m.Description) > 100 {
		return errs.Invalidf("description", "max_length", "%s: description is %d characters; the MCP registry takes at most 100", path, len(m.Description))
	}
	if ns, name, ok := strings.Cut(m.RegistryName, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return errs.Invalidf("registry_name", "format", "%s: registry_name %q is not <namespace>/<name>", path, m.RegistryName)
	}
	if !strings.Contains(m.DownloadURL, "{file}") {
		return errs.Invalidf("download_url", "format", "%s: download_url %q has no {file}", path, m.DownloadURL)
	}
	return nil
}

// URL is where the published file named file of version is downloaded.
func (m Meta) URL(version, file string) string {
	return strings.NewReplacer("{version}", version, "{file}", file).Replace(m.DownloadURL)
}
