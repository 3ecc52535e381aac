package bundle

import "github.com/cairn-mcp/cairn/sdk/errs"

// TimestampVerificationData is the protobuf-specs message of that name
// (protos/sigstore_bundle.proto): the RFC 3161 timestamps over the DSSE
// signature that anchor a Sigstore export in time (docs/decisions.md D38).
type TimestampVerificationData struct {
	RFC3161Timestamps []RFC3161Timestamp `json:"rfc3161Timestamps"`
}

// RFC3161Timestamp holds one DER TimeStampResp, as cosign and sigstore-go
// store it; protobuf JSON writes the bytes as standard base64.
type RFC3161Timestamp struct {
	SignedTimestamp []byte `json:"signedTimestamp"`
}

// Signature is the one DSSE signature a Sigstore bundle holds: what a
// timestamp's message imprint hashes.
func (s *SigstoreBundle) Signature() ([]byte, error) {
	if s.DSSEEnvelope == nil || len(s.DSSEEnvelope.Signatures) != 1 {
		return nil, errs.Invalidf("dsseEnvelope", "signatures", "the bundle holds no single DSSE signature to timestamp")
	}
	return s.DSSEEnvelope.Signatures[0].Sig, nil
}

// AddTimestamp records a TimeStampResp over the bundle's signature.
func (s *SigstoreBundle) AddTimestamp(tsr []byte) {
	vm := &s.VerificationMaterial
	if vm.TimestampVerificationData == nil {
		vm.TimestampVerificationData = &TimestampVerificationData{}
	}
	vm.TimestampVerificationData.RFC3161Timestamps = append(vm.TimestampVerificationData.RFC3161Timestamps, RFC3161Timestamp{SignedTimestamp: tsr})
}

// Timestamps lists the bundle's RFC 3161 timestamps, nil when there are none.
func (s *SigstoreBundle) Timestamps() []RFC3161Timestamp {
	if s.VerificationMaterial.TimestampVerificationData == nil {
		return nil
	}
	return s.VerificationMaterial.TimestampVerificationData.RFC3161Timestamps
}
