// Package release builds what a cairn release publishes, for `make
// release`: per platform a tar.gz holding the cairn binary (which runs
// every built-in area) with the README and LICENSE, and an MCP bundle
// (.mcpb) for a one-click install in Claude Desktop; the MCP registry's
// server.json; a Claude Code plugin folder (the MCP server entry and the
// canonical skills) with its archive; and checksums.txt, signed with the
// release key in cosign's blob format (checksums.txt.sig, cosign.pub).
// docs/deploy.md (Releases) says how to make and check one.
package release

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Options says what Build makes and where.
type Options struct {
	// Repo is the repository root, Out the folder the release is written
	// to (created; refused when it holds anything).
	Repo, Out string
	// Version is the release version (see Version).
	Version string
	// Targets are the platforms built (Targets by default).
	Targets []Target
	// Key signs the checksum file.
	Key *ecdsa.PrivateKey
	// Go is the go command (default "go").
	Go string
	// Epoch is every file time in the archives (the commit's time makes a
	// rebuild byte-identical); zero means 1980-01-01, zip's first day.
	Epoch time.Time
	// Log hears one line per step (default: nowhere).
	Log io.Writer
}

// Result names what Build wrote, each file relative to Dir.
type Result struct {
	Dir           string
	Version       string
	Archives      []string
	Bundles       []Bundle
	ServerJSON    string
	PluginDir     string
	PluginArchive string
	Checksums     string
	Signature     string
	PublicKey     string
}

// Build makes the release o describes.
func Build(ctx context.Context, o Options) (Result, error) {
	res := Result{Dir: o.Out, Version: o.Version}
	if v, err := Version(o.Version); err != nil || v != o.Version {
		return res, errs.Invalidf("version", "semver", "version %q: pass Version's result", o.Version)
	}
	if o.Key == nil {
		return res, errs.Invalidf("key", "required", "a release is signed: set %s to the release key's file", KeyFileEnv)
	}
	if len(o.Targets) == 0 {
		o.Targets = Targets
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Epoch.IsZero() {
		o.Epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	meta, err := LoadMeta(filepath.Join(o.Repo, MetaFile))
	if err != nil {
		return res, err
	}
	docs, err := docEntries(o.Repo)
	if err != nil {
		return res, err
	}
	if err := emptyDir(o.Out); err != nil {
		return res, err
	}
	work, err := os.MkdirTemp("", "cairn-release-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(work)

	for _, t := range o.Targets {
		start := time.Now()
		dir := filepath.Join(work, t.String())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return res, err
		}
		bins, err := BuildBinaries(ctx, o.Go, o.Repo, dir, t, o.Version)
		if err != nil {
			return res, err
		}
		archive := ArchiveName(o.Version, t)
		entries := append([]Entry{{Name: "cairn", Mode: 0o755, Path: bins.Cairn}, {Name: "cairn-areas", Mode: 0o755, Path: bins.Areas}}, docs...)
		if err := WriteTarGz(filepath.Join(o.Out, archive), o.Epoch, entries); err != nil {
			return res, fmt.Errorf("write %s: %w", archive, err)
		}
		res.Archives = append(res.Archives, archive)

		manifest, err := json.MarshalIndent(NewMCPBManifest(meta, o.Version, t), "", "  ")
		if err != nil {
			return res, err
		}
		bundle := MCPBName(o.Version, t)
		entries = append([]Entry{{Name: "manifest.json", Mode: 0o644, Body: append(manifest, '\n')},
			{Name: MCPBEntryPoint, Mode: 0o755, Path: bins.Cairn}, {Name: MCPBAreas, Mode: 0o755, Path: bins.Areas}}, docs...)
		if err := WriteZip(filepath.Join(o.Out, bundle), o.Epoch, entries); err != nil {
			return res, fmt.Errorf("write %s: %w", bundle, err)
		}
		sum, err := FileSHA256(filepath.Join(o.Out, bundle))
		if err != nil {
			return res, err
		}
		res.Bundles = append(res.Bundles, Bundle{Target: t, File: bundle, SHA256: sum})
		logf("release: %s: %s, %s (%.1fs)", t, archive, bundle, time.Since(start).Seconds())
	}

	server, err := json.MarshalIndent(NewServerJSON(meta, o.Version, res.Bundles), "", "  ")
	if err != nil {
		return res, err
	}
	res.ServerJSON = ServerJSONFile
	if err := os.WriteFile(filepath.Join(o.Out, ServerJSONFile), append(server, '\n'), 0o644); err != nil {
		return res, err
	}

	plugin, err := PluginEntries(meta, o.Version)
	if err != nil {
		return res, err
	}
	res.PluginDir, res.PluginArchive = PluginDir, PluginArchiveName(o.Version)
	if err := writeTree(filepath.Join(o.Out, PluginDir), plugin); err != nil {
		return res, err
	}
	prefixed := make([]Entry, len(plugin))
	for i, e := range plugin {
		e.Name = PluginDir + "/" + e.Name
		prefixed[i] = e
	}
	if err := WriteTarGz(filepath.Join(o.Out, res.PluginArchive), o.Epoch, prefixed); err != nil {
		return res, err
	}
	logf("release: %s, %s/ and %s (%d skills)", ServerJSONFile, PluginDir, res.PluginArchive, len(plugin)-3)

	published := append([]string{ServerJSONFile, res.PluginArchive}, res.Archives...)
	for _, b := range res.Bundles {
		published = append(published, b.File)
	}
	sums, err := Checksums(o.Out, published)
	if err != nil {
		return res, err
	}
	sig, err := SignBlob(o.Key, sums)
	if err != nil {
		return res, err
	}
	pub, err := PublicKeyPEM(o.Key)
	if err != nil {
		return res, err
	}
	res.Checksums, res.Signature, res.PublicKey = ChecksumsFile, SignatureFile, PublicKeyFile
	for name, body := range map[string][]byte{ChecksumsFile: sums, SignatureFile: sig, PublicKeyFile: pub} {
		if err := os.WriteFile(filepath.Join(o.Out, name), body, 0o644); err != nil {
			return res, err
		}
	}
	// What is published is checked as a user will check it.
	if err := VerifyBlob(pub, sig, sums); err != nil {
		return res, fmt.Errorf("the release's own signature does not verify: %w", err)
	}
	if err := VerifyChecksums(o.Out, sums); err != nil {
		return res, err
	}
	logf("release: %s signed (%s, %s) in %s", ChecksumsFile, SignatureFile, PublicKeyFile, o.Out)
	return res, nil
}

// docEntries are the README and, when the repository has one, the LICENSE.
func docEntries(repo string) ([]Entry, error) {
	var out []Entry
	for _, name := range []string{"README.md", "LICENSE"} {
		p := filepath.Join(repo, name)
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) && name == "LICENSE" {
				continue
			}
			return nil, err
		}
		out = append(out, Entry{Name: name, Mode: 0o644, Path: p})
	}
	return out, nil
}

// emptyDir makes dir, or accepts it when it is empty: files of another
// build would sit beside this one's unlisted.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return errs.Invalidf("out", "empty", "%s already holds %s; remove it or choose another folder", dir, ents[0].Name())
	}
	return nil
}

// writeTree writes entries as files under dir.
func writeTree(dir string, entries []Entry) error {
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, e.Body, e.Mode); err != nil {
			return err
		}
	}
	return nil
}
