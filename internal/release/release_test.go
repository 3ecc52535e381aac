package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/buildid"
	"github.com/cairn-mcp/cairn/skills"
)

// TestReleaseOfTheHostTarget runs the release build `make release` runs
// (the builder's main, with the key in CAIRN_RELEASE_KEY_FILE) for the
// host's own platform only, into a temporary folder, and checks what a
// user gets: a binary that runs and says the version, checksums that
// match, a signature the public key verifies, a bundle whose manifest
// names an entry point it holds, and a registry entry and a plugin of the
// same version.
func TestReleaseOfTheHostTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn (minutes on a small machine)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	_, privPEM, pubPEM, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(tmp, "release.key")
	if err := os.WriteFile(keyFile, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	const version = "0.0.0-test.1"
	out := filepath.Join(tmp, "dist")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "run", "./internal/release/cmd", "build",
		"-version", "v"+version, "-out", out, "-targets", "host")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), KeyFileEnv+"="+keyFile, "GO="+goCmd)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release build: %v\n%s", err, b)
	}
	t.Logf("release build of %s: %.0fs", HostTarget(), time.Since(start).Seconds())
	host := HostTarget()

	// Signature and checksums, with the public key the test holds (not
	// the cosign.pub beside the files, which must be the same).
	if err := Verify(out, pubPEM); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := readFile(t, out, PublicKeyFile); !bytes.Equal(got, pubPEM) {
		t.Fatalf("cosign.pub = %s, want the key's public key", got)
	}
	sums, err := ParseChecksums(readFile(t, out, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	wantListed := []string{ArchiveName(version, host), MCPBName(version, host), ServerJSONFile, PluginArchiveName(version)}
	for _, name := range wantListed {
		if _, ok := sums[name]; !ok {
			t.Errorf("checksums.txt does not list %s", name)
		}
	}
	// A changed file or a changed checksum list fails.
	tampered := filepath.Join(tmp, "tampered")
	if err := os.CopyFS(tampered, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	sumsBody := readFile(t, out, ChecksumsFile)
	if err := os.WriteFile(filepath.Join(tampered, ChecksumsFile), bytes.Replace(sumsBody, []byte(sums[ServerJSONFile]), []byte(strings.Repeat("0", 64)), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(tampered, pubPEM); err == nil {
		t.Fatal("a changed checksum file verifies")
	}
	verifyWithTools(t, out)

	// The archive's binary runs and says the version.
	arch := untar(t, filepath.Join(out, ArchiveName(version, host)))
	for _, name := range []string{"cairn", "README.md", "LICENSE"} {
		if _, ok := arch[name]; !ok {
			t.Fatalf("the archive holds %v, not %s", keys(arch), name)
		}
	}
	if arch["cairn"].mode&0o111 == 0 {
		t.Fatalf("cairn in the archive has mode %v, not executable", arch["cairn"].mode)
	}
	wantVersionOf(t, tmp, "archive", arch["cairn"].body, version)
	if arch["cairn-areas"].mode&0o111 == 0 {
		t.Fatalf("the archive holds %v, not an executable cairn-areas", keys(arch))
	}
	wantAreasOf(t, tmp, "archive", arch["cairn"].body, arch["cairn-areas"].body)

	// The bundle: manifest fields, the entry point in the zip, runnable.
	zr, err := zip.OpenReader(filepath.Join(out, MCPBName(version, host)))
	if err != nil {
		t.Fatalf("the bundle is not a zip: %v", err)
	}
	defer zr.Close()
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	var manifest map[string]any
	if err := json.Unmarshal(readZip(t, files, "manifest.json"), &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for _, field := range []string{"manifest_version", "name", "version", "description"} {
		if s, _ := manifest[field].(string); s == "" {
			t.Errorf("manifest.json has no %s", field)
		}
	}
	if manifest["version"] != version {
		t.Errorf("manifest version = %v, want %s", manifest["version"], version)
	}
	if author, _ := manifest["author"].(map[string]any); author == nil || author["name"] == "" {
		t.Errorf("manifest author = %v, want a name", manifest["author"])
	}
	server, _ := manifest["server"].(map[string]any)
	entry, _ := server["entry_point"].(string)
	mcpConfig, _ := server["mcp_config"].(map[string]any)
	if server["type"] != "binary" || entry == "" || mcpConfig["command"] != "${__dirname}/"+entry {
		t.Fatalf("manifest server = %v, want a binary whose command is its entry point", server)
	}
	if args, _ := mcpConfig["args"].([]any); len(args) != 1 || args[0] != "serve" {
		t.Errorf("mcp_config args = %v, want [serve]", mcpConfig["args"])
	}
	compat, _ := manifest["compatibility"].(map[string]any)
	if platforms, _ := compat["platforms"].([]any); len(platforms) != 1 || platforms[0] != host.OS {
		t.Errorf("compatibility.platforms = %v, want [%s]", compat["platforms"], host.OS)
	}
	ef, ok := files[entry]
	if !ok {
		t.Fatalf("the bundle holds no entry point %s", entry)
	}
	if ef.Mode().Perm()&0o111 == 0 {
		t.Fatalf("the entry point has mode %v, not executable", ef.Mode())
	}
	wantVersionOf(t, tmp, "bundle", readZip(t, files, entry), version)
	if af, ok := files[MCPBAreas]; !ok || af.Mode().Perm()&0o111 == 0 {
		t.Fatalf("the bundle holds no executable %s", MCPBAreas)
	}
	wantAreasOf(t, tmp, "bundle", readZip(t, files, entry), readZip(t, files, MCPBAreas))

	// server.json names the bundle by its download URL and SHA-256.
	var sj ServerJSON
	if err := json.Unmarshal(readFile(t, out, ServerJSONFile), &sj); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	if sj.Version != version || !strings.HasPrefix(sj.Name, "io.github.") || len(sj.Packages) != 1 {
		t.Fatalf("server.json = %+v", sj)
	}
	p := sj.Packages[0]
	if p.RegistryType != "mcpb" || !strings.HasSuffix(p.Identifier, "/"+MCPBName(version, host)) || p.FileSHA256 != sums[MCPBName(version, host)] || p.Version != version {
		t.Fatalf("server.json package = %+v, want the bundle with sha256 %s", p, sums[MCPBName(version, host)])
	}

	// The plugin folder and its archive: same version, the MCP server, the
	// skills.
	var plugin PluginManifest
	if err := json.Unmarshal(readFile(t, out, PluginDir, "cairn", ".claude-plugin", "plugin.json"), &plugin); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	if plugin.Name != "cairn" || plugin.Version != version {
		t.Fatalf("plugin.json = %+v, want cairn %s", plugin, version)
	}
	var market Marketplace
	if err := json.Unmarshal(readFile(t, out, PluginDir, ".claude-plugin", "marketplace.json"), &market); err != nil {
		t.Fatalf("marketplace.json: %v", err)
	}
	if len(market.Plugins) != 1 || market.Plugins[0].Version != version {
		t.Fatalf("marketplace.json = %+v", market)
	}
	if st, err := os.Stat(filepath.Join(out, PluginDir, market.Plugins[0].Source)); err != nil || !st.IsDir() {
		t.Fatalf("the marketplace's plugin source %s is no folder: %v", market.Plugins[0].Source, err)
	}
	var mcp PluginMCP
	if err := json.Unmarshal(readFile(t, out, PluginDir, "cairn", ".mcp.json"), &mcp); err != nil || !slices.Equal(mcp.MCPServers["cairn"].Args, []string{"serve"}) {
		t.Fatalf(".mcp.json = %+v (%v)", mcp, err)
	}
	skillDirs, _ := fs.Glob(skills.FS, skills.Prefix+"*")
	got, _ := filepath.Glob(filepath.Join(out, PluginDir, "cairn", "skills", skills.Prefix+"*", "SKILL.md"))
	if len(got) != len(skillDirs) {
		t.Fatalf("the plugin holds %d skills, want %d", len(got), len(skillDirs))
	}
	pa := untar(t, filepath.Join(out, PluginArchiveName(version)))
	if len(pa) != 3+len(skillDirs) {
		t.Fatalf("the plugin archive holds %d files, want %d", len(pa), 3+len(skillDirs))
	}
	for name, f := range pa {
		if !bytes.Equal(f.body, readFile(t, out, filepath.FromSlash(name))) {
			t.Fatalf("%s differs between the plugin archive and the folder", name)
		}
	}
}

// verifyWithTools checks the signature with the command-line tools a user
// has, where this machine has them: cosign (key mode, no transparency
// log) and openssl.
func verifyWithTools(t *testing.T, dir string) {
	t.Helper()
	if cosign, err := exec.LookPath("cosign"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, cosign, "verify-blob", "--key", PublicKeyFile, "--signature", SignatureFile,
			"--insecure-ignore-tlog=true", "--offline=true", ChecksumsFile)
		c.Dir = dir
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("cosign verify-blob: %v\n%s", err, b)
		}
	} else {
		t.Log("no cosign on PATH: the signature is checked by VerifyBlob and sigstore's verifier only")
	}
	if openssl, err := exec.LookPath("openssl"); err == nil {
		raw := mustBase64(t, readFile(t, dir, SignatureFile))
		sigFile := filepath.Join(t.TempDir(), "sig.der")
		if err := os.WriteFile(sigFile, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(openssl, "dgst", "-sha256", "-verify", PublicKeyFile, "-signature", sigFile, ChecksumsFile)
		c.Dir = dir
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("openssl dgst -verify: %v\n%s", err, b)
		}
	}
}

type tarFile struct {
	mode fs.FileMode
	body []byte
}

func untar(t *testing.T, path string) map[string]tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	out := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = tarFile{mode: h.FileInfo().Mode(), body: body}
	}
}

func readZip(t *testing.T, files map[string]*zip.File, name string) []byte {
	t.Helper()
	f, ok := files[name]
	if !ok {
		t.Fatalf("the zip holds no %s", name)
	}
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wantVersionOf writes a packaged binary out and runs `cairn --version`.
// wantAreasOf fails unless cairn holds the build ID of areas, the
// cairn-areas shipped beside it, as the linker sets it: else cairn would
// not run its areas from it.
func wantAreasOf(t *testing.T, tmp, from string, cairn, areas []byte) {
	t.Helper()
	path := filepath.Join(tmp, from+"-cairn-areas")
	if err := os.WriteFile(path, areas, 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := buildid.Read(path)
	if err != nil {
		t.Fatalf("%s: cairn-areas: %v", from, err)
	}
	if !bytes.Contains(cairn, []byte(id)) {
		t.Fatalf("%s: cairn does not name cairn-areas' build ID %s", from, id)
	}
}

func wantVersionOf(t *testing.T, tmp, from string, bin []byte, version string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("cairn runs on Unix")
	}
	path := filepath.Join(tmp, from+"-cairn")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s: cairn --version: %v\n%s", from, err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "cairn "+version; got != want {
		t.Fatalf("%s: cairn --version = %q, want %q", from, got, want)
	}
}
