package buildid

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildHello builds a small Go program for goos/goarch and returns its
// path and the ID `go tool buildid` reads from it.
func buildHello(t *testing.T, goos, goarch string) (path, want string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module hello\n\ngo 1.21\n")
	write("main.go", "package main\n\nfunc main() { println(\"hello\") }\n")
	path = filepath.Join(dir, "hello-"+goos)
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "buildid", path).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	return path, strings.TrimSpace(string(out))
}

func TestReadAgreesWithGoTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	t.Parallel()
	for _, target := range [][2]string{{"linux", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}} {
		t.Run(target[0], func(t *testing.T) {
			t.Parallel()
			path, want := buildHello(t, target[0], target[1])
			got, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || want == "" {
				t.Fatalf("Read = %q, go tool buildid = %q", got, want)
			}
		})
	}
}

func TestReadRefusesFilesWithoutAnID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string][]byte{
		"empty":         nil,
		"script":        []byte("#!/bin/sh\necho hi\n"),
		"truncated elf": []byte("\x7fELF\x02\x01\x01"),
		"unclosed id":   []byte("junk\xff Go build ID: \"abc"),
		"empty id":      []byte("\xff Go build ID: \"\"\n \xff"),
	}
	for name, body := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, body, 0o755); err != nil {
			t.Fatal(err)
		}
		if id, err := Read(p); err == nil {
			t.Errorf("%s: Read = %q, want an error", name, id)
		} else if name != "truncated elf" && !errors.Is(err, ErrNone) {
			t.Errorf("%s: %v, want ErrNone", name, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFromTextFindsTheMarker(t *testing.T) {
	t.Parallel()
	id, err := fromText([]byte("\x00\x01\xff Go build ID: \"a/b/c/d\"\n \xff\x00"))
	if err != nil || id != "a/b/c/d" {
		t.Fatalf("fromText = %q, %v", id, err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte("\xff Go build ID: \"x\"\n \xff"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Read(p) // must not panic
	})
}
