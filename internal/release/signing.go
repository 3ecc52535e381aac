package release

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The release key is given to `make release` by file, never on a command
// line: KeyFileEnv names the PEM file, KeyPasswordEnv its password when it
// is encrypted (a key from `cosign generate-key-pair` is; cosign's own
// COSIGN_PASSWORD is read too).
const (
	KeyFileEnv     = "CAIRN_RELEASE_KEY_FILE"
	KeyPasswordEnv = "CAIRN_RELEASE_KEY_PASSWORD"
)

// The files of a release's signature: the checksum file's signature in
// cosign's blob format (base64 of an ASN.1 ECDSA signature over the file's
// SHA-256) and the public key that checks it (PEM, PKIX), which `cosign
// verify-blob --key` and `openssl dgst -verify` take.
const (
	SignatureFile = ChecksumsFile + ".sig"
	PublicKeyFile = "cosign.pub"
)

// LoadKey reads the release signing key: an ECDSA P-256 key, cosign's
// default, as PEM: PKCS#8 ("PRIVATE KEY", what `openssl genpkey` and
// GenerateKey write), SEC 1 ("EC PRIVATE KEY"), or cosign's encrypted key
// file, opened with password. Other key types are refused: cosign treats
// ed25519 blob signatures differently across its versions, P-256 alike.
func LoadKey(path string, password []byte) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.Invalidf("key", "readable", "release key %s: %v", path, err)
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(data, func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return nil, errs.Invalidf("key", "pem", "release key %s does not parse (%v); an encrypted key needs %s", path, err, KeyPasswordEnv)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errs.Invalidf("key", "ecdsa_p256", "release key %s is a %T; the release signs with ECDSA P-256 (cosign's default)", path, key)
	}
	return ec, nil
}

// KeyPassword is the release key's password from the environment.
func KeyPassword(getenv func(string) string) []byte {
	for _, name := range []string{KeyPasswordEnv, "COSIGN_PASSWORD"} {
		if v := getenv(name); v != "" {
			return []byte(v)
		}
	}
	return nil
}

// GenerateKey makes a release key pair: the private key as PKCS#8 PEM and
// its public key as PKIX PEM.
func GenerateKey() (priv *ecdsa.PrivateKey, privPEM, pubPEM []byte, err error) {
	priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, nil, err
	}
	pubPEM, err = PublicKeyPEM(priv)
	if err != nil {
		return nil, nil, nil, err
	}
	return priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pubPEM, nil
}

// PublicKeyPEM is key's public key as a PEM "PUBLIC KEY" block (PKIX).
func PublicKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// SignBlob signs data as `cosign sign-blob --key` does: an ASN.1 ECDSA
// signature over SHA-256(data), base64, with no line end.
func SignBlob(key *ecdsa.PrivateKey, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(sig)), nil
}

// VerifyBlob checks a SignBlob signature (or cosign's) of data with the
// PEM public key: what `cosign verify-blob --key` checks of a signature
// kept outside a transparency log.
func VerifyBlob(pubPEM, sigB64, data []byte) error {
	blk, _ := pem.Decode(pubPEM)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return errs.Invalid("public_key", "pem", "the public key holds no PEM PUBLIC KEY block")
	}
	parsed, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return errs.Invalidf("public_key", "pkix", "the public key does not parse: %v", err)
	}
	pub, ok := parsed.(*ecdsa.PublicKey)
	if !ok {
		return errs.Invalidf("public_key", "ecdsa", "the public key is a %T, not ECDSA", parsed)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sigB64)))
	if err != nil {
		return errs.Invalidf("signature", "base64", "the signature is not base64: %v", err)
	}
	sum := sha256.Sum256(data)
	if !ecdsa.VerifyASN1(pub, sum[:], sig) {
		return errs.Invalid("signature", "valid", "the signature does not match the data and the public key")
	}
	return nil
}
