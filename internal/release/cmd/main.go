// Command cmd is the release builder `make release` runs:
//
//	go run ./internal/release/cmd build -version 0.2.0 -out dist/0.2.0
//	go run ./internal/release/cmd keygen -out ~/.config/cairn-release
//	go run ./internal/release/cmd verify -dir dist/0.2.0 -key cosign.pub
//
// build signs with the key file named by CAIRN_RELEASE_KEY_FILE (or -key),
// its password, if any, in CAIRN_RELEASE_KEY_PASSWORD. docs/deploy.md
// (Releases) has the steps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/internal/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: build | keygen | verify (see -h of each)")
	}
	switch args[0] {
	case "build":
		return build(args[1:])
	case "keygen":
		return keygen(args[1:])
	case "verify":
		return verify(args[1:])
	}
	return fmt.Errorf("unknown command %q: build, keygen or verify", args[0])
}

func build(args []string) error {
	fl := flag.NewFlagSet("build", flag.ContinueOnError)
	version := fl.String("version", "", "release version: semver, a leading v dropped (git describe)")
	out := fl.String("out", "", "folder to write the release to (default dist/<version>)")
	targets := fl.String("targets", "all", "all, host, or os/arch pairs separated by commas")
	keyFile := fl.String("key", os.Getenv(release.KeyFileEnv), "release key file (default $"+release.KeyFileEnv+")")
	repo := fl.String("repo", ".", "repository root")
	if err := fl.Parse(args); err != nil {
		return err
	}
	v, err := release.Version(*version)
	if err != nil {
		return err
	}
	ts, err := release.ParseTargets(*targets)
	if err != nil {
		return err
	}
	if *keyFile == "" {
		return fmt.Errorf("no release key: set %s (or -key) to its file; `go run ./internal/release/cmd keygen` makes one", release.KeyFileEnv)
	}
	key, err := release.LoadKey(*keyFile, release.KeyPassword(os.Getenv))
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join("dist", v)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	res, err := release.Build(ctx, release.Options{Repo: *repo, Out: *out, Version: v, Targets: ts, Key: key,
		Go: goCommand(), Epoch: epoch(*repo), Log: os.Stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "release %s: %d targets in %s (%.0fs)\n", res.Version, len(ts), res.Dir, time.Since(start).Seconds())
	return nil
}

// goCommand is the go that runs this program, so a release builds with
// the toolchain `make` chose.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// epoch is the time every archive entry carries: SOURCE_DATE_EPOCH when
// set (reproducible-builds.org), else the commit's time.
func epoch(repo string) time.Time {
	raw := os.Getenv("SOURCE_DATE_EPOCH")
	if raw == "" {
		out, err := exec.Command("git", "-C", repo, "log", "-1", "--format=%ct").Output()
		if err != nil {
			return time.Time{}
		}
		raw = strings.TrimSpace(string(out))
	}
	sec, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func keygen(args []string) error {
	fl := flag.NewFlagSet("keygen", flag.ContinueOnError)
	out := fl.String("out", "", "folder for release.key (mode 0600) and cosign.pub")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("keygen: -out is required")
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return err
	}
	_, priv, pub, err := release.GenerateKey()
	if err != nil {
		return err
	}
	keyPath := filepath.Join(*out, "release.key")
	f, err := os.OpenFile(keyPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; keygen never replaces a key", keyPath)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(priv); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, release.PublicKeyFile), pub, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s\n%s\n", keyPath, filepath.Join(*out, release.PublicKeyFile))
	return nil
}

func verify(args []string) error {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	dir := fl.String("dir", "", "the release folder")
	keyFile := fl.String("key", "", "the project's public key (PEM)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *keyFile == "" {
		return errors.New("verify: -dir and -key are required")
	}
	pub, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	if err := release.Verify(*dir, pub); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: signature and checksums verified\n", *dir)
	return nil
}
