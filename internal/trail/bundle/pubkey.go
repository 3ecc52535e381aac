package bundle

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// PublicKey returns the ed25519 public key inside a note verifier key
// (<name>+<hash>+base64(0x01 || key)), the key that also signs the Sigstore
// bundle's DSSE envelope (docs/decisions.md D38).
func PublicKey(verifierKey string) (ed25519.PublicKey, error) {
	parts := strings.SplitN(verifierKey, "+", 3) // base64 may contain "+"
	if len(parts) != 3 {
		return nil, errs.Invalidf("key", "format", "verifier key %q is not <name>+<hash>+<key>", verifierKey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 1 {
		return nil, errs.Invalidf("key", "format", "verifier key %q does not hold an ed25519 key", verifierKey)
	}
	return ed25519.PublicKey(raw[1:]), nil
}

// PublicKeyPEM encodes the verifier key's ed25519 key as a PEM "PUBLIC KEY"
// block (PKIX), the form sigstore-go and cosign's --key take.
func PublicKeyPEM(verifierKey string) ([]byte, error) {
	pub, err := PublicKey(verifierKey)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, errs.Invalidf("key", "format", "cannot encode the public key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// VerifierKeyFromPEM is the note verifier key named name for the ed25519
// key of a PEM "PUBLIC KEY" block, the form PublicKeyPEM writes: an auditor
// handed the PEM key verifies with it as with the verifier key.
func VerifierKeyFromPEM(name string, data []byte) (string, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return "", errs.Invalid("key", "format", "the key file holds no PEM PUBLIC KEY block")
	}
	parsed, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return "", errs.Invalidf("key", "format", "the PEM public key does not parse: %v", err)
	}
	pub, ok := parsed.(ed25519.PublicKey)
	if !ok {
		return "", errs.Invalidf("key", "format", "the PEM public key is a %T; cairn signs with ed25519", parsed)
	}
	vkey, err := note.NewEd25519VerifierKey(name, pub)
	if err != nil {
		return "", errs.Invalidf("key", "format", "%v", err)
	}
	return vkey, nil
}

// KeyHint names a public key in a Sigstore bundle's
// verificationMaterial.publicKey.hint: the base64 SHA-256 of its PKIX DER
// encoding, as sigstore-go's own signer names keys.
func KeyHint(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil { // only for a key of the wrong length
		return ""
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:])
}
