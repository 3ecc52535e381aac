package release

import (
	"archive/zip"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/skills"
)

func wantInvalid(t *testing.T, err error, field, rule string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("err = %v, want a typed error on %s (%s)", err, field, rule)
	}
	if e.Details["field"] != field || e.Details["constraint"] != rule {
		t.Fatalf("err = %q %v, want it to name field %s and rule %s", e, e.Details, field, rule)
	}
}

func TestVersionIsSemverWithoutTheTagsV(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"v1.2.3":                  "1.2.3",
		"0.2.0":                   "0.2.0",
		"v1.2.3-4-gabc1234-dirty": "1.2.3-4-gabc1234-dirty",
		"1.0.0-rc.1+build.5":      "1.0.0-rc.1+build.5",
	} {
		got, err := Version(raw)
		if err != nil || got != want {
			t.Errorf("Version(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "60ec0a1", "1.2", "v01.2.3", "1.2.3-", "latest"} {
		_, err := Version(raw)
		wantInvalid(t, err, "version", "semver")
	}
}

func TestParseTargets(t *testing.T) {
	t.Parallel()
	all, err := ParseTargets("")
	if err != nil || len(all) != 4 {
		t.Fatalf("ParseTargets(\"\") = %v, %v; want the 4 targets", all, err)
	}
	got, err := ParseTargets("linux/arm64, darwin_amd64,linux/arm64")
	if err != nil || len(got) != 2 || got[0] != (Target{"linux", "arm64"}) || got[1] != (Target{"darwin", "amd64"}) {
		t.Fatalf("ParseTargets = %v, %v", got, err)
	}
	_, err = ParseTargets("windows/amd64")
	wantInvalid(t, err, "targets", "supported")
	_, err = ParseTargets("linux")
	wantInvalid(t, err, "targets", "os/arch")
}

func TestSignatureVerifiesAsCosignDoes(t *testing.T) {
	t.Parallel()
	key, _, pubPEM, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("0123  cairn_1.0.0_linux_amd64.tar.gz\n")
	sig, err := SignBlob(key, data)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(sig, "\n ") {
		t.Fatalf("signature %q has a line end; cosign reads the file as one base64 string", sig)
	}
	if err := VerifyBlob(pubPEM, sig, data); err != nil {
		t.Fatalf("VerifyBlob: %v", err)
	}
	// sigstore's verifier is the one cosign verify-blob --key loads.
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	raw := mustBase64(t, sig)
	if err := v.VerifySignature(bytes.NewReader(raw), bytes.NewReader(data)); err != nil {
		t.Fatalf("sigstore's verifier refuses the signature: %v", err)
	}

	tampered := append(bytes.Clone(data), 'x')
	wantInvalid(t, VerifyBlob(pubPEM, sig, tampered), "signature", "valid")
	if err := v.VerifySignature(bytes.NewReader(raw), bytes.NewReader(tampered)); err == nil {
		t.Fatal("sigstore's verifier accepts a signature of other data")
	}
	_, _, otherPub, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, VerifyBlob(otherPub, sig, data), "signature", "valid")
	wantInvalid(t, VerifyBlob([]byte("not a key"), sig, data), "public_key", "pem")
	wantInvalid(t, VerifyBlob(pubPEM, []byte("%%%"), data), "signature", "base64")
}

func mustBase64(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLoadKeyTakesPEMAndCosignKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, privPEM, _, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := LoadKey(write("pkcs8.key", privPEM), nil)
	if err != nil || !got.Equal(key) {
		t.Fatalf("LoadKey(PKCS#8) = %v, %v", got, err)
	}
	sec1, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := LoadKey(write("sec1.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})), nil); err != nil || !got.Equal(key) {
		t.Fatalf("LoadKey(SEC 1) = %v, %v", got, err)
	}
	// What `cosign generate-key-pair` writes: an encrypted sigstore key.
	password := []byte("correct horse")
	cosignPEM, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		t.Fatal(err)
	}
	cosignKey := write("cosign.key", cosignPEM)
	if _, err := LoadKey(cosignKey, password); err != nil {
		t.Fatalf("LoadKey(cosign key, password) = %v", err)
	}
	_, err = LoadKey(cosignKey, []byte("wrong"))
	wantInvalid(t, err, "key", "pem")

	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edDER, err := x509.MarshalPKCS8PrivateKey(edPriv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadKey(write("ed.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: edDER})), nil)
	wantInvalid(t, err, "key", "ecdsa_p256")
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p384DER, err := x509.MarshalPKCS8PrivateKey(p384)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadKey(write("p384.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p384DER})), nil)
	wantInvalid(t, err, "key", "ecdsa_p256")
	_, err = LoadKey(filepath.Join(dir, "missing.key"), nil)
	wantInvalid(t, err, "key", "readable")
}

func TestChecksumsRoundTripAndRefuseChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"b.tar.gz": "bee", "a.mcpb": "ay"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := Checksums(dir, []string{"b.tar.gz", "a.mcpb"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  a.mcpb") || !strings.HasSuffix(lines[1], "  b.tar.gz") {
		t.Fatalf("checksums = %q, want sorted sha256sum lines", sums)
	}
	if err := VerifyChecksums(dir, sums); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.mcpb"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, VerifyChecksums(dir, sums), "checksums", "match")
	_, err = ParseChecksums([]byte("abc  x\n"))
	wantInvalid(t, err, "checksums", "format")
	_, err = ParseChecksums([]byte(strings.Repeat("0", 64) + "  ../etc/passwd\n"))
	wantInvalid(t, err, "checksums", "format")
	wantInvalid(t, VerifyChecksums(dir, nil), "checksums", "non_empty")
}

func TestArchivesAreByteIdenticalAcrossBuilds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entries := []Entry{{Name: "cairn", Mode: 0o755, Body: []byte("#!binary")}, {Name: "README.md", Mode: 0o644, Body: []byte("# cairn")}}
	mtime := time.Unix(1700000000, 0)
	for _, write := range []func(string, time.Time, []Entry) error{WriteTarGz, WriteZip} {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := write(a, mtime, entries); err != nil {
			t.Fatal(err)
		}
		if err := write(b, mtime, entries); err != nil {
			t.Fatal(err)
		}
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if !bytes.Equal(da, db) {
			t.Fatal("two writes of the same entries differ")
		}
	}
	zr, err := zip.OpenReader(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if m := zr.File[0].Mode(); m.Perm() != 0o755 {
		t.Fatalf("zip keeps cairn's mode as %v, want 0755", m)
	}
}

func TestPluginHoldsTheCanonicalSkills(t *testing.T) {
	t.Parallel()
	meta, err := LoadMeta(filepath.Join("..", "..", MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := PluginEntries(meta, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.Glob(skills.FS, skills.Prefix+"*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no canonical skills: %v", err)
	}
	byName := map[string][]byte{}
	for _, e := range entries {
		byName[e.Name] = e.Body
	}
	for _, d := range dirs {
		if _, ok := byName["cairn/skills/"+d+"/SKILL.md"]; !ok {
			t.Errorf("the plugin lacks skill %s", d)
		}
	}
	var mcp PluginMCP
	if err := json.Unmarshal(byName["cairn/.mcp.json"], &mcp); err != nil || mcp.MCPServers["cairn"].Command != "cairn" {
		t.Fatalf(".mcp.json = %s (%v), want the cairn server", byName["cairn/.mcp.json"], err)
	}
}

func TestMetaRefusesWhatTheRegistryRefuses(t *testing.T) {
	t.Parallel()
	meta, err := LoadMeta(filepath.Join("..", "..", MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	long := meta
	long.Description = strings.Repeat("x", 101)
	wantInvalid(t, long.check("m"), "description", "max_length")
	bad := meta
	bad.RegistryName = "cairn"
	wantInvalid(t, bad.check("m"), "registry_name", "format")
}
