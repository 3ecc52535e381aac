package release

// server.json describes cairn to the MCP registry
// (registry.modelcontextprotocol.io): its name, version and where each
// package is fetched. The registry lists cairn's bundles as "mcpb"
// packages: a URL of a release file and its SHA-256, which a client checks
// before it installs.

// ServerSchema is the server.json schema written.
const ServerSchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// ServerJSONFile is the registry entry's file in a release.
const ServerJSONFile = "server.json"

// ServerJSON is the registry's server.json.
type ServerJSON struct {
	Schema      string            `json:"$schema"`
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	WebsiteURL  string            `json:"websiteUrl,omitempty"`
	Repository  *ServerRepository `json:"repository,omitempty"`
	Packages    []ServerPackage   `json:"packages"`
}

// ServerRepository is the entry's source repository.
type ServerRepository struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// ServerPackage is one downloadable form of the server.
type ServerPackage struct {
	RegistryType         string           `json:"registryType"`
	Identifier           string           `json:"identifier"`
	Version              string           `json:"version"`
	FileSHA256           string           `json:"fileSha256"`
	Transport            ServerTransport  `json:"transport"`
	EnvironmentVariables []ServerVariable `json:"environmentVariables,omitempty"`
}

// ServerTransport is how a client talks to the started package.
type ServerTransport struct {
	Type string `json:"type"`
}

// ServerVariable is an environment variable a client may set.
type ServerVariable struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	Format      string `json:"format,omitempty"`
}

// Bundle is one built bundle: its target, file name and SHA-256.
type Bundle struct {
	Target Target
	File   string
	SHA256 string
}

// NewServerJSON is the registry entry of version, listing bundles.
func NewServerJSON(m Meta, version string, bundles []Bundle) ServerJSON {
	s := ServerJSON{Schema: ServerSchema, Name: m.RegistryName, Title: m.DisplayName,
		Description: m.Description, Version: version, WebsiteURL: m.Homepage}
	if m.Repository != "" {
		s.Repository = &ServerRepository{URL: m.Repository, Source: "github"}
	}
	for _, b := range bundles {
		s.Packages = append(s.Packages, ServerPackage{
			RegistryType: "mcpb",
			Identifier:   m.URL(version, b.File),
			Version:      version,
			FileSHA256:   b.SHA256,
			Transport:    ServerTransport{Type: "stdio"},
			EnvironmentVariables: []ServerVariable{
				{Name: "CAIRN_ROOT", Description: "The repository cairn works in (default: the working directory).", Format: "filepath"},
				{Name: "CAIRN_PROJECT", Description: "A project slug registered at start and made the active project."},
			},
		})
	}
	return s
}
