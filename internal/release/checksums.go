package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ChecksumsFile lists the SHA-256 of every published file of a release,
// in sha256sum's format, so `sha256sum -c` checks a download.
const ChecksumsFile = "checksums.txt"

// FileSHA256 is the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Checksums is the checksum file of the files named in dir: one
// "<sha256>  <name>" line each, sorted by name.
func Checksums(dir string, names []string) ([]byte, error) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	var b bytes.Buffer
	for _, name := range sorted {
		sum, err := FileSHA256(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return b.Bytes(), nil
}

// ParseChecksums reads a checksum file into name → hex SHA-256.
func ParseChecksums(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" || strings.ContainsAny(name, "/\\") {
			return nil, errs.Invalidf("checksums", "format", "line %d is not \"<sha256>  <file name>\": %q", line, sc.Text())
		}
		if _, dup := out[name]; dup {
			return nil, errs.Invalidf("checksums", "unique", "line %d names %s a second time", line, name)
		}
		out[name] = sum
	}
	return out, sc.Err()
}

// VerifyChecksums checks every file the checksum file lists against the
// files in dir.
func VerifyChecksums(dir string, data []byte) error {
	sums, err := ParseChecksums(data)
	if err != nil {
		return err
	}
	if len(sums) == 0 {
		return errs.Invalid("checksums", "non_empty", "the checksum file lists no file")
	}
	for name, want := range sums {
		got, err := FileSHA256(filepath.Join(dir, name))
		if err != nil {
			return errs.Invalidf("checksums", "present", "%s: %v", name, err)
		}
		if got != want {
			return errs.Invalidf("checksums", "match", "%s has sha256 %s, the checksum file says %s", name, got, want)
		}
	}
	return nil
}
