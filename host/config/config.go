// Package config resolves the host's settings from the environment, flags
// and the optional config file, and refuses bad settings with typed errors
// (ERR_INVALID_MODE, ERR_CONFIG_INVALID) before anything starts.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Modes (docs/decisions.md D15).
const (
	ModeFull     = "FULL"
	ModeReadOnly = "READONLY"
	ModeTest     = "TEST"
	ModeMinimal  = "MINIMAL"
)

// BuiltinToolsets are the toolsets of the built-in areas (docs/decisions.md D16).
var BuiltinToolsets = []string{"core", "sdd", "vision", "computer", "admin"}

// DefaultToolsets is the CAIRN_TOOLSETS default.
const DefaultToolsets = "core,sdd"

// Var documents one environment variable.
type Var struct {
	Name, Default, Meaning string
}

// Vars lists every environment variable the host reads; --help and the
// README's configuration table are generated from it.
var Vars = []Var{
	{"CAIRN_ROOT", "working directory", "Workspace root: skills in .agents/skills, commands in .agents/commands, plans in .planning."},
	{"CAIRN_DATA_DIR", "<root>/.cairn/data", "Where the stores, keys and state/sdd-state.json live."},
	{"CAIRN_AUDIT_KEY_FILE", "<data dir>/audit-signing.key", "The ed25519 key that signs audit proof bundles (created on first use, mode 0600). Servers sharing one PostgreSQL store point it at one key file so one verifier key checks every export."},
	{"CAIRN_AUDIT_TSA_URL", "", "An RFC 3161 timestamp authority the operator runs (http(s) URL): cairn audit export --format sigstore and the dashboard's Sigstore download store its timestamp over the signature in the bundle, and fail naming the URL if it does not answer (--no-timestamp skips it on the CLI)."},
	{"CAIRN_STORE", "bbolt", "Where every area keeps its state: bbolt (files in the data dir) or a postgres://… URL that several cairn servers share (docs/deploy.md). Ignored in TEST mode."},
	{"CAIRN_MODE", "FULL", "FULL, READONLY (read-only tools only), TEST (stores in a temporary directory removed at exit) or MINIMAL (host tools only, no plugins)."},
	{"CAIRN_TOOLSETS", DefaultToolsets, "Comma-separated toolsets to expose: core, sdd, vision, computer, admin, or all. Third-party plugins' toolsets are exposed unless excluded with -name; none serves only the toolsets named beside it (alone, or a list with nothing valid: only the system tools)."},
	{"CAIRN_AGENT_ID", "the MCP client's name", "Identity recorded as created_by, updated_by and recorded_by."},
	{"CAIRN_PROJECT", "", "Project slug registered at start and used as the active project."},
	{"CAIRN_CONFIG", "<root>/.cairn/config.yaml", "Config file naming extra plugins, pins and replacements for built-in areas."},
	{"CAIRN_PLUGIN_DIR", "<root>/.cairn/plugins", "Directory scanned for cairn-plugin-* executables."},
	{"CAIRN_TRUST_FILE", "$XDG_CONFIG_HOME/cairn/trust.json, else ~/.config/cairn/trust.json", "The operator's trust store: sha256 of the workspace plugins allowed to run (cairn plugins trust)."},
	{"CAIRN_PLUGIN_RESTART_MAX", "30s", "Longest wait between restarts of a crashing plugin (the wait doubles from 100ms up to it)."},
	{"CAIRN_LOG_LEVEL", "info", "trace, debug, info, warn or error. Logs go to stderr only. Commands that serve log at info; one-shot commands log errors only unless this is set or --verbose is given."},
	{"CAIRN_LOG_FORMAT", "text", "text or json."},
	{"CAIRN_ENV", "production", "development allows webhooks to private and loopback addresses."},
	{"CAIRN_DAEMON", "on", "off serves stdio or HTTP in the cairn serve process instead of through the shared daemon of the data dir (refused while one runs)."},
	{"CAIRN_MAX_MESSAGE", "8MiB", "Largest JSON-RPC message one session may send (bytes, or with KiB/MiB)."},
	{"CAIRN_MAX_CONCURRENT_CALLS", "16", "Tool calls one session runs at once; more wait in order."},
	{"CAIRN_DAEMON_IDLE", "5m", "How long the shared daemon waits after its last session or HTTP listener before it exits (it stays while an MCP task works)."},
	{"CAIRN_HTTP_ALLOWED_ORIGINS", "", "With --http: comma-separated origins (scheme://host[:port]) whose web pages may call the server, besides its own; requests from any other Origin get 403."},
	{"CAIRN_HTTP_SESSION_IDLE", "30m", "With --http: an MCP session with no request for this long ends (its Mcp-Session-Id then answers 404)."},
	{"CAIRN_HTTP_BODY_TIMEOUT", "30s", "With --http: a request body not fully received this long after its headers is cut off (408)."},
	{"CAIRN_HTTP_MAX_CONNS_PER_KEY", "16", "With --http and API keys: requests one key may have open at once (event streams included); the next gets 429."},
	{"CAIRN_OAUTH_ISSUER", "", "With --http: the OAuth 2.1 authorization server's issuer URL (https://, or http:// on loopback); cairn then serves protected resource metadata and accepts its JWT access tokens beside API keys (docs/security.md)."},
	{"CAIRN_OAUTH_RESOURCE", "the listener's /mcp URL", "With CAIRN_OAUTH_ISSUER: this server's canonical resource URL, the audience every access token must name (RFC 8707)."},
	{"ANTHROPIC_API_KEY", "", "Key for the hosted model behind the vision and computer toolsets (never logged)."},
	{"ANTHROPIC_BASE_URL", "the vendor's API", "Base URL of the Messages API."},
	{"CAIRN_VISION_MODEL", "claude-sonnet-5-5", "Model for image analysis and computer use."},
	{"CAIRN_VISION_TIMEOUT", "60s", "Timeout of one request to the hosted model."},
	{"CAIRN_VISION_MAX_RETRIES", "2", "Retries of a failed request to the hosted model (408, 409, 429, 5xx)."},
	{"CAIRN_COMPUTER_TOOL", "computer_20251124", "Computer-use tool version of the hosted-model loop: computer_20251124 (default), computer_20250124 or computer_20241022; the beta header follows the version."},
	{"DISPLAY", "", "X11 display the computer toolset drives."},
}

// Settings is the resolved configuration of one host run.
type Settings struct {
	Root    string
	DataDir string
	// Store is CAIRN_STORE: "" (bbolt, the data dir's files) or a
	// PostgreSQL URL (docs/decisions.md D26). The host passes it to the area
	// plugins, which own their tables and migrations.
	Store      string
	Mode       string
	Toolsets   Toolsets
	AgentID    string
	Project    string
	ConfigFile string
	// ConfigExplicit is true when the config file was named with --config
	// or CAIRN_CONFIG rather than found in the workspace.
	ConfigExplicit bool
	PluginDir      string
	// PluginDirExplicit is true when CAIRN_PLUGIN_DIR named the plugin dir.
	PluginDirExplicit bool
	// AuditKeyFile is CAIRN_AUDIT_KEY_FILE as an absolute path, or "" for
	// the data dir's key (bundle.KeyPath).
	AuditKeyFile string
	// AuditTSAURL is CAIRN_AUDIT_TSA_URL, the timestamp authority that
	// anchors Sigstore exports, or "" (docs/decisions.md D38).
	AuditTSAURL string
	// TrustFile is the operator's trust store (docs/decisions.md D23).
	TrustFile string
	// RestartBackoffMax caps the wait between restarts of a crashing plugin.
	RestartBackoffMax time.Duration
	LogLevel          string
	LogFormat         string
	Env               string
	// File is the parsed config file (empty when there is none).
	File File
	// TempDataDir is set in TEST mode: the host removes it at exit.
	TempDataDir bool
	// OneSession is set by a command whose host serves one session with
	// these settings (stdio without a daemon): Start returns once the
	// plugins that session's toolsets need are up, and the others start
	// after (docs/decisions.md D46). Not read from the environment.
	OneSession bool
	// Warnings name the session settings that were wrong and what is used
	// instead; the session reports them and goes on.
	Warnings []string
}

func (s *Settings) addWarning(w string) {
	if w != "" {
		s.Warnings = append(s.Warnings, w)
	}
}

// Toolsets is the parsed CAIRN_TOOLSETS.
type Toolsets struct {
	All bool
	// None ("none") serves no toolset but those named: not even a
	// third-party plugin's. A list with nothing valid in it is read as
	// "none", the system tools only, so a typo never widens what a session
	// may call (docs/decisions.md D42).
	None    bool
	Enabled map[string]bool
	// Excluded holds "-name" entries.
	Excluded map[string]bool
	// Explicit is true when CAIRN_TOOLSETS was set (not the default); only
	// then does the host refuse names no plugin provides.
	Explicit bool
}

// Allows reports whether tools of toolset ts are exposed. Built-in toolsets
// must be named (or "all"); other toolsets belong to third-party plugins the
// operator installed on purpose, so they are exposed unless excluded.
func (t Toolsets) Allows(ts string) bool {
	if t.Excluded[ts] {
		return false
	}
	if t.All || t.Enabled[ts] {
		return true
	}
	if t.None {
		return false
	}
	for _, b := range BuiltinToolsets {
		if b == ts {
			return false
		}
	}
	return true
}

// Empty reports a list that names nothing: no toolset, no "all", "none"
// or exclusion.
func (t Toolsets) Empty() bool {
	return !t.All && !t.None && len(t.Enabled) == 0 && len(t.Excluded) == 0
}

// SystemOnly is what a list with nothing valid left serves: no toolset,
// only the host's system tools (docs/decisions.md D42).
func SystemOnly() Toolsets {
	return Toolsets{None: true, Explicit: true, Enabled: map[string]bool{}, Excluded: map[string]bool{}}
}

// SystemOnlyNote ends the warning about a CAIRN_TOOLSETS with nothing
// valid left.
const SystemOnlyNote = "nothing valid is left, so this session serves only the system tools (server_ping, server_health) until CAIRN_TOOLSETS is fixed"

// String renders the toolsets as configured.
func (t Toolsets) String() string {
	var parts []string
	if t.All {
		parts = append(parts, "all")
	}
	if t.None {
		parts = append(parts, "none")
	}
	for k := range t.Enabled {
		parts = append(parts, k)
	}
	for k := range t.Excluded {
		parts = append(parts, "-"+k)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Compiled on first use, not in package init, which every cairn process runs.
var toolsetPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// ParseToolsets parses a CAIRN_TOOLSETS value.
func ParseToolsets(s string) (Toolsets, error) {
	t := Toolsets{Enabled: map[string]bool{}, Excluded: map[string]bool{}}
	for _, raw := range strings.Split(s, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		excluded := strings.HasPrefix(name, "-")
		name = strings.TrimPrefix(name, "-")
		if name == "all" && !excluded {
			t.All = true
			continue
		}
		if name == "none" && !excluded {
			t.None = true
			continue
		}
		if !toolsetPattern().MatchString(name) {
			return t, errs.Newf(400, errs.ConfigInvalid, "CAIRN_TOOLSETS: %q is not a toolset name (expected a comma-separated list such as core,sdd)", raw)
		}
		if excluded {
			t.Excluded[name] = true
		} else {
			t.Enabled[name] = true
		}
	}
	return t, nil
}

// File is the YAML config file.
//
//	plugins:
//	  core:                       # replaces the built-in core area
//	    path: /opt/cairn/cairn-plugin-core
//	    sha256: 3b1f...           # refuse to start a binary that differs
//	  weather:
//	    path: ./bin/cairn-plugin-weather
//	    args: ["--units", "metric"]
//	    env: {WEATHER_TOKEN_FILE: /run/secrets/weather}
//	    settings: {region: eu}
//	    required: true            # a failure to start stops the host
//	  sdd:
//	    disabled: true            # do not start this area
type File struct {
	Plugins map[string]PluginEntry `yaml:"plugins"`
}

// PluginEntry configures one plugin.
type PluginEntry struct {
	Path     string            `yaml:"path"`
	SHA256   string            `yaml:"sha256"`
	Args     []string          `yaml:"args"`
	Env      map[string]string `yaml:"env"`
	Settings map[string]string `yaml:"settings"`
	Required bool              `yaml:"required"`
	Disabled bool              `yaml:"disabled"`
}

var (
	pluginNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })
	sha256Pattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
)

// LoadFile reads and checks a config file. A missing file is not an error
// when optional is true.
func LoadFile(path string, optional bool) (File, error) {
	var f File
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			if optional {
				return f, nil
			}
			return f, errs.Newf(400, errs.ConfigInvalid, "config file %s does not exist: create it, or drop --config and CAIRN_CONFIG to use %s", path, filepath.Join("<root>", ".cairn", "config.yaml"))
		}
		return f, errs.Newf(400, errs.ConfigInvalid, "config file %s: %v", path, err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err.Error() != "EOF" {
		return f, errs.Newf(400, errs.ConfigInvalid, "config file %s: %v", path, err)
	}
	base := filepath.Dir(path)
	for name, p := range f.Plugins {
		if !pluginNamePattern().MatchString(name) {
			return f, errs.Newf(400, errs.ConfigInvalid, "config file %s: plugin name %q must match %s", path, name, pluginNamePattern())
		}
		if p.SHA256 != "" {
			p.SHA256 = strings.ToLower(p.SHA256)
			if !sha256Pattern().MatchString(p.SHA256) {
				return f, errs.Newf(400, errs.ConfigInvalid, "config file %s: plugins.%s.sha256 must be 64 hex digits", path, name)
			}
		}
		if p.Path != "" && !filepath.IsAbs(p.Path) {
			p.Path = filepath.Join(base, p.Path)
		}
		f.Plugins[name] = p
	}
	return f, nil
}

// Lookup reads an environment variable; tests replace it.
type Lookup func(string) (string, bool)

// Resolve builds Settings from the environment. cwd is the working
// directory; configFlag overrides CAIRN_CONFIG when non-empty.
func Resolve(env Lookup, cwd, configFlag string) (Settings, error) {
	get := func(k, def string) string {
		if v, ok := env(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	s := Settings{}
	root := get("CAIRN_ROOT", cwd)
	abs, err := filepath.Abs(root)
	if err != nil {
		return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_ROOT %q: %v", root, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_ROOT %q is not a directory; point it at your repository", root)
	}
	s.Root = abs

	// A session's own settings (mode, toolsets, project) are forgiven: what
	// is wrong is reported (Warnings) and the session goes on with what is
	// valid (docs/decisions.md D21).
	var warn string
	s.Mode, warn = SessionMode(get("CAIRN_MODE", ModeFull))
	s.addWarning(warn)
	s.Toolsets, warn = SessionToolsets(get("CAIRN_TOOLSETS", DefaultToolsets))
	s.addWarning(warn)
	if v, ok := env("CAIRN_TOOLSETS"); ok && strings.TrimSpace(v) != "" {
		s.Toolsets.Explicit = true
	}

	s.DataDir = get("CAIRN_DATA_DIR", filepath.Join(s.Root, ".cairn", "data"))
	if !filepath.IsAbs(s.DataDir) {
		s.DataDir = filepath.Join(s.Root, s.DataDir)
	}
	if s.Store, err = parseStore(get("CAIRN_STORE", "")); err != nil {
		return s, err
	}
	if s.AuditKeyFile = get("CAIRN_AUDIT_KEY_FILE", ""); s.AuditKeyFile != "" {
		if !filepath.IsAbs(s.AuditKeyFile) {
			s.AuditKeyFile = filepath.Join(cwd, s.AuditKeyFile)
		}
		if st, err := os.Stat(s.AuditKeyFile); err == nil && st.IsDir() {
			return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_AUDIT_KEY_FILE %q is a directory; name the key file itself", s.AuditKeyFile)
		}
	}
	if s.AuditTSAURL, err = parseTSAURL(get("CAIRN_AUDIT_TSA_URL", "")); err != nil {
		return s, err
	}
	s.AgentID = get("CAIRN_AGENT_ID", "")
	s.Project, warn = SessionProject(get("CAIRN_PROJECT", ""))
	s.addWarning(warn)
	s.PluginDir = get("CAIRN_PLUGIN_DIR", filepath.Join(s.Root, ".cairn", "plugins"))
	if !filepath.IsAbs(s.PluginDir) {
		s.PluginDir = filepath.Join(cwd, s.PluginDir)
	}
	s.PluginDirExplicit = get("CAIRN_PLUGIN_DIR", "") != ""
	s.RestartBackoffMax = DefaultRestartBackoffMax
	if v := get("CAIRN_PLUGIN_RESTART_MAX", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond || d > time.Hour {
			return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_PLUGIN_RESTART_MAX %q: use a duration between 100ms and 1h, such as 30s", v)
		}
		s.RestartBackoffMax = d
	}
	s.LogLevel = strings.ToLower(get("CAIRN_LOG_LEVEL", "info"))
	switch s.LogLevel {
	case "trace", "debug", "info", "warn", "error", "off":
	default:
		return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_LOG_LEVEL %q: use trace, debug, info, warn or error", s.LogLevel)
	}
	s.LogFormat = strings.ToLower(get("CAIRN_LOG_FORMAT", "text"))
	if s.LogFormat != "text" && s.LogFormat != "json" {
		return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_LOG_FORMAT %q: use text or json", s.LogFormat)
	}
	s.Env = strings.ToLower(get("CAIRN_ENV", "production"))

	cfgPath, optional := configFlag, false
	if cfgPath == "" {
		if v, ok := env("CAIRN_CONFIG"); ok && v != "" {
			cfgPath = v
		} else {
			cfgPath, optional = filepath.Join(s.Root, ".cairn", "config.yaml"), true
		}
	}
	if !filepath.IsAbs(cfgPath) {
		cfgPath = filepath.Join(cwd, cfgPath)
	}
	s.ConfigFile = cfgPath
	s.ConfigExplicit = !optional
	// A store that cannot be located is reported where plugins are checked
	// (every workspace plugin is then untrusted), not here: settings
	// without HOME are otherwise fine.
	s.TrustFile, _ = trust.DefaultPath(env)
	if s.File, err = LoadFile(cfgPath, optional); err != nil {
		return s, err
	}
	return s, nil
}

// DefaultRestartBackoffMax is the CAIRN_PLUGIN_RESTART_MAX default.
const DefaultRestartBackoffMax = 30 * time.Second

// String summarises the settings for the log.
func (s Settings) String() string {
	return fmt.Sprintf("root=%s data=%s mode=%s toolsets=%s", s.Root, s.DataDir, s.Mode, s.Toolsets)
}
