package release

// An MCP bundle (.mcpb) is a zip whose manifest.json says how a desktop
// agent host starts the server in it, for a one-click install in Claude
// Desktop (github.com/modelcontextprotocol/mcpb, MANIFEST.md). A binary
// bundle holds one executable, and the manifest can choose a command per
// operating system but not per CPU, so a release makes one bundle per
// target, each declaring its one platform.

// MCPBManifestVersion is the bundle manifest spec version written.
const MCPBManifestVersion = "0.3"

// MCPBEntryPoint is where the bundle holds the cairn binary.
const MCPBEntryPoint = "server/cairn"

// MCPBAreas is where the bundle holds cairn-areas, beside cairn.
const MCPBAreas = "server/cairn-areas"

// MCPBManifest is a bundle's manifest.json.
type MCPBManifest struct {
	ManifestVersion  string                    `json:"manifest_version"`
	Name             string                    `json:"name"`
	DisplayName      string                    `json:"display_name,omitempty"`
	Version          string                    `json:"version"`
	Description      string                    `json:"description"`
	LongDescription  string                    `json:"long_description,omitempty"`
	Author           Author                    `json:"author"`
	Homepage         string                    `json:"homepage,omitempty"`
	Repository       *MCPBRepository           `json:"repository,omitempty"`
	License          string                    `json:"license,omitempty"`
	Keywords         []string                  `json:"keywords,omitempty"`
	Server           MCPBServer                `json:"server"`
	ToolsGenerated   bool                      `json:"tools_generated"`
	PromptsGenerated bool                      `json:"prompts_generated"`
	Compatibility    MCPBCompatibility         `json:"compatibility"`
	UserConfig       map[string]MCPBUserOption `json:"user_config,omitempty"`
}

// MCPBRepository is the manifest's source repository.
type MCPBRepository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// MCPBServer says what runs: the entry point in the bundle and the command
// line the host starts it with.
type MCPBServer struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  MCPConfig `json:"mcp_config"`
}

// MCPConfig is a stdio server's command line, as agent hosts configure one.
type MCPConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// MCPBCompatibility names the operating systems (Node's process.platform
// names) the bundle runs on.
type MCPBCompatibility struct {
	Platforms []string `json:"platforms"`
}

// MCPBUserOption is a setting the host asks for at install.
type MCPBUserOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Default     any    `json:"default,omitempty"`
}

// NewMCPBManifest is the manifest of the bundle of version for t. The
// host starts `cairn serve` from the bundle with the repository the user
// picks at install as its root (an app's working directory is no
// repository) and, when given, the project to register.
func NewMCPBManifest(m Meta, version string, t Target) MCPBManifest {
	man := MCPBManifest{
		ManifestVersion: MCPBManifestVersion,
		Name:            m.Name,
		DisplayName:     m.DisplayName,
		Version:         version,
		Description:     m.Description,
		LongDescription: m.LongDescription,
		Author:          m.Author,
		Homepage:        m.Homepage,
		License:         m.License,
		Keywords:        m.Keywords,
		Server: MCPBServer{
			Type:       "binary",
			EntryPoint: MCPBEntryPoint,
			MCPConfig: MCPConfig{
				Command: "${__dirname}/" + MCPBEntryPoint,
				Args:    []string{"serve"},
				Env: map[string]string{
					"CAIRN_ROOT":    "${user_config.root}",
					"CAIRN_PROJECT": "${user_config.project}",
				},
			},
		},
		// The tools are the areas' own and a plugin dir can add more.
		ToolsGenerated:   true,
		PromptsGenerated: true,
		Compatibility:    MCPBCompatibility{Platforms: []string{t.OS}},
		UserConfig: map[string]MCPBUserOption{
			"root": {Type: "directory", Title: "Repository",
				Description: "The repository cairn works in: its tasks and audit trail live in .cairn/ there, its skills in .agents/skills.",
				Required:    true},
			"project": {Type: "string", Title: "Project",
				Description: "A project slug (e.g. myproject) registered at start and made the active project. Leave empty to add projects later.",
				Default:     ""},
		},
	}
	if m.Repository != "" {
		man.Repository = &MCPBRepository{Type: "git", URL: m.Repository}
	}
	return man
}

// MCPBName is the bundle file of version for t.
func MCPBName(version string, t Target) string {
	return "cairn_" + version + "_" + t.String() + ".mcpb"
}

// ArchiveName is the archive file of version for t.
func ArchiveName(version string, t Target) string {
	return "cairn_" + version + "_" + t.String() + ".tar.gz"
}
