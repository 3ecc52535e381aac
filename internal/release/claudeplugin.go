package release

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"

	"github.com/cairn-mcp/cairn/skills"
)

// A Claude Code plugin is a folder with .claude-plugin/plugin.json, the MCP
// servers it adds in .mcp.json and its skills in skills/<name>/SKILL.md.
// `/plugin install` takes plugins from a marketplace, so the release's
// folder is a marketplace (.claude-plugin/marketplace.json) holding the one
// plugin in cairn/: `/plugin marketplace add <folder>`, then `/plugin
// install cairn@cairn`. The plugin is the same on every platform: it
// starts the cairn on PATH, which a release archive provides.

// PluginDir is the plugin folder in a release, and PluginArchiveName its
// archive for download.
const PluginDir = "cairn-claude-plugin"

// PluginArchiveName is the archive of the plugin folder of version.
func PluginArchiveName(version string) string { return "cairn_" + version + "_claude-plugin.tar.gz" }

// PluginManifest is .claude-plugin/plugin.json.
type PluginManifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Author      Author   `json:"author"`
	Homepage    string   `json:"homepage,omitempty"`
	Repository  string   `json:"repository,omitempty"`
	License     string   `json:"license,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
}

// PluginMCP is the plugin's .mcp.json.
type PluginMCP struct {
	MCPServers map[string]MCPConfig `json:"mcpServers"`
}

// Marketplace is .claude-plugin/marketplace.json.
type Marketplace struct {
	Name    string              `json:"name"`
	Owner   Author              `json:"owner"`
	Plugins []MarketplacePlugin `json:"plugins"`
}

// MarketplacePlugin is a marketplace's entry for one plugin.
type MarketplacePlugin struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Description string `json:"description"`
	Version     string `json:"version"`
}

// PluginEntries are the files of the plugin folder, named relative to the
// folder: the marketplace, the plugin's manifest and .mcp.json, and every
// canonical skill (the ones `cairn init` installs).
func PluginEntries(m Meta, version string) ([]Entry, error) {
	man := PluginManifest{Name: m.Name, Version: version, Description: m.Description, Author: m.Author,
		Homepage: m.Homepage, Repository: m.Repository, License: m.License, Keywords: m.Keywords}
	// Claude Code starts the server in the project's directory, which is
	// then cairn's root.
	mcp := PluginMCP{MCPServers: map[string]MCPConfig{m.Name: {Command: "cairn", Args: []string{"serve"}}}}
	market := Marketplace{Name: m.Name, Owner: m.Author, Plugins: []MarketplacePlugin{
		{Name: m.Name, Source: "./" + m.Name, Description: m.Description, Version: version}}}
	var out []Entry
	for _, f := range []struct {
		name string
		v    any
	}{
		{".claude-plugin/marketplace.json", market},
		{m.Name + "/.claude-plugin/plugin.json", man},
		{m.Name + "/.mcp.json", mcp},
	} {
		body, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Name: f.name, Mode: 0o644, Body: append(body, '\n')})
	}
	err := fs.WalkDir(skills.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(p, skills.Prefix) {
			return err
		}
		body, err := fs.ReadFile(skills.FS, p)
		if err != nil {
			return err
		}
		out = append(out, Entry{Name: path.Join(m.Name, "skills", p), Mode: 0o644, Body: body})
		return nil
	})
	return out, err
}
