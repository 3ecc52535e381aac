package bundle

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"

	"golang.org/x/mod/sumdb/note"
)

// KeyFile is the file in the data dir that holds the checkpoint signer key,
// in the note signer key format (PRIVATE+KEY+<name>+<hash>+<base64>).
const KeyFile = "audit-signing.key"

// KeyFileEnv names the setting that puts the signer key somewhere else
// than the data dir: servers of one cluster each have their own data dir
// but must sign with one key, so a verifier needs one verifier key.
const KeyFileEnv = "CAIRN_AUDIT_KEY_FILE"

// KeyPath is where the signer key lives: file when set, else the data
// dir's KeyFile.
func KeyPath(dataDir, file string) string {
	if file != "" {
		return file
	}
	return filepath.Join(dataDir, KeyFile)
}

// LoadOrCreateKey returns the host's checkpoint signer and its verifier key
// (the note verifier key format, <name>+<hash>+<base64>, which `cairn audit
// pubkey` prints and `cairn audit verify` takes). The signer key lives in
// path (see KeyPath) with mode 0600; it is created on first use. name is
// the key name (no spaces or '+'); an existing key of another name is
// refused rather than silently replaced.
func LoadOrCreateKey(path, name string) (note.Signer, string, error) {
	if name == "" || strings.ContainsRune(name, '+') || strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return nil, "", fmt.Errorf("audit key name %q is invalid: it must be non-empty, without spaces or '+'", name)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path, name); err != nil {
			return nil, "", err
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read audit signing key: %w", err)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, "", fmt.Errorf("audit signing key %s has mode %04o; others can read it: run chmod 600 %s", path, fi.Mode().Perm(), path)
		}
	}
	skey := strings.TrimSpace(string(data))
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", fmt.Errorf("audit signing key %s is malformed (%v); move it away to create a new key", path, err)
	}
	if signer.Name() != name {
		return nil, "", fmt.Errorf("audit signing key %s is named %q, not %q; use that name or move the file away", path, signer.Name(), name)
	}
	vkey, err := verifierKey(skey)
	if err != nil {
		return nil, "", fmt.Errorf("audit signing key %s: %w", path, err)
	}
	return signer, vkey, nil
}

// createKey writes a fresh key without ever exposing a partial file or
// replacing a key another process created meanwhile: write a private temp
// file, then hard-link it into place, which fails if the name exists.
func createKey(path, name string) error {
	dir := filepath.Dir(path)
	skey, _, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return fmt.Errorf("generate audit signing key %q: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the signing key's directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".audit-signing-*.tmp")
	if err != nil {
		return fmt.Errorf("create audit signing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("create audit signing key: %w", err)
	}
	if _, err := tmp.WriteString(skey + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("write audit signing key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write audit signing key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write audit signing key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("install audit signing key: %w", err)
	}
	return nil
}

// verifierKey derives the verifier key from a signer key, which holds the
// ed25519 seed: PRIVATE+KEY+<name>+<hash>+base64(0x01 || seed).
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5) // base64 may contain "+"
	if len(parts) != 5 {
		return "", errors.New("malformed signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("signer key is not an ed25519 key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}
