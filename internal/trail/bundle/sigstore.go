package bundle

import (
	"crypto/ed25519"
	"encoding/json"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// SigstoreMediaType is the media type of the Sigstore bundles cairn writes
// (github.com/sigstore/protobuf-specs, protos/sigstore_bundle.proto).
const SigstoreMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// SigstoreBundle is a Sigstore bundle v0.3 in its protobuf JSON form,
// holding a DSSE envelope signed with a long-lived key: the key is named by
// verificationMaterial.publicKey.hint, with no certificate, no transparency
// log entry and, unless the operator runs a timestamp authority, no
// timestamp (docs/decisions.md D38).
type SigstoreBundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial VerificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         *Envelope            `json:"dsseEnvelope"`
}

// VerificationMaterial holds the public key's hint and, when the export was
// anchored in a timestamp authority (docs/decisions.md D38), its RFC 3161
// timestamps; tlogEntries is written, empty, for readers that expect the list.
type VerificationMaterial struct {
	PublicKey                 *PublicKeyID               `json:"publicKey"`
	TlogEntries               []struct{}                 `json:"tlogEntries"`
	TimestampVerificationData *TimestampVerificationData `json:"timestampVerificationData,omitempty"`
}

// PublicKeyID is the protobuf-specs PublicKeyIdentifier.
type PublicKeyID struct {
	Hint string `json:"hint"`
}

// Attest signs b's in-toto statement (NewStatement) in a DSSE envelope with
// the audit key, whose note verifier key is verifierKey, and wraps it in a
// Sigstore bundle. The signature is pure ed25519 over PAE(payloadType,
// payload), which is what the note signer produces for any message.
func Attest(b *Bundle, signer note.Signer, verifierKey string) (*SigstoreBundle, error) {
	pub, err := PublicKey(verifierKey)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(NewStatement(b))
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "encode the in-toto statement: %v", err)
	}
	pae := PAE(PayloadType, payload)
	sig, err := signer.Sign(pae)
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "sign the DSSE envelope: %v", err)
	}
	if !ed25519.Verify(pub, pae, sig) {
		return nil, errs.Invalidf("key", "match", "the signing key does not match the verifier key %s", verifierKey)
	}
	return &SigstoreBundle{
		MediaType:            SigstoreMediaType,
		VerificationMaterial: VerificationMaterial{PublicKey: &PublicKeyID{Hint: KeyHint(pub)}, TlogEntries: []struct{}{}},
		DSSEEnvelope:         &Envelope{Payload: payload, PayloadType: PayloadType, Signatures: []EnvelopeSig{{Sig: sig}}},
	}, nil
}

// Marshal encodes the bundle as indented JSON, the file `cairn audit export
// --format sigstore` writes.
func (s *SigstoreBundle) Marshal() ([]byte, error) {
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// ParseSigstore decodes a Sigstore bundle, refusing another media type.
func ParseSigstore(data []byte) (*SigstoreBundle, error) {
	var s SigstoreBundle
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, errs.Invalidf("bundle", "type", "bundle is not valid Sigstore bundle JSON: %v", err)
	}
	if s.MediaType != SigstoreMediaType {
		return nil, errs.Invalidf("mediaType", "const", "bundle media type is %q, want %q", s.MediaType, SigstoreMediaType)
	}
	return &s, nil
}

// IsSigstore tells a Sigstore bundle from a cairn one by its mediaType field.
func IsSigstore(data []byte) bool {
	var probe struct {
		MediaType string `json:"mediaType"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.MediaType != ""
}
