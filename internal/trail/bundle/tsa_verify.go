package bundle

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"time"

	tsaverify "github.com/sigstore/timestamp-authority/v2/pkg/verification"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// PartTimestamp names an RFC 3161 timestamp that does not verify.
const PartTimestamp = "timestamp"

// TSAChain is a timestamp authority's certificate chain as the operator
// hands it to verifiers: a self-signed root, any intermediates, and
// optionally the signing (leaf) certificate (docs/decisions.md D38).
type TSAChain struct {
	Leaf          *x509.Certificate
	Intermediates []*x509.Certificate
	Roots         []*x509.Certificate
}

// ParseTSAChain reads PEM CERTIFICATE blocks: self-signed CAs are roots, a
// non-CA certificate is the signing leaf, the rest intermediates. field
// names the flag or file in errors.
func ParseTSAChain(data []byte, field string) (*TSAChain, error) {
	var c TSAChain
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, errs.Invalidf(field, "x509", "%s holds a certificate that does not parse: %v", field, err)
		}
		switch {
		case !cert.IsCA:
			if c.Leaf != nil {
				return nil, errs.Invalidf(field, "chain", "%s holds two signing (non-CA) certificates", field)
			}
			c.Leaf = cert
		case bytes.Equal(cert.RawSubject, cert.RawIssuer) && cert.CheckSignatureFrom(cert) == nil:
			c.Roots = append(c.Roots, cert)
		default:
			c.Intermediates = append(c.Intermediates, cert)
		}
	}
	if len(c.Roots) == 0 {
		return nil, errs.Invalidf(field, "chain", "%s holds no self-signed root certificate of the timestamp authority (PEM CERTIFICATE blocks)", field)
	}
	return &c, nil
}

// VerifyTimestamps checks every RFC 3161 timestamp of the bundle as
// sigstore-go does: the token's signature chains to one of the TSA's roots
// (for a certificate with the timestamping usage, valid at the stamped
// time) and its message imprint is the hash of the DSSE signature
// (docs/decisions.md D38). It returns the stamped times in the bundle's
// order, and nil or a *VerifyError naming each timestamp that broke.
func VerifyTimestamps(s *SigstoreBundle, chain *TSAChain) ([]time.Time, error) {
	var c collector
	sig, err := s.Signature()
	if err != nil {
		c.addf(PartEnvelope, -1, nil, "%v", err)
		return nil, c.err()
	}
	var times []time.Time
	for i, ts := range s.Timestamps() {
		got, err := tsaverify.VerifyTimestampResponse(ts.SignedTimestamp, bytes.NewReader(sig), tsaverify.VerifyOpts{
			TSACertificate: chain.Leaf,
			Intermediates:  chain.Intermediates,
			Roots:          chain.Roots,
		})
		if err != nil {
			c.addf(PartTimestamp, -1, nil, "rfc3161Timestamps[%d] does not verify with the timestamp authority's chain: %v", i, err)
			continue
		}
		times = append(times, got.Time)
	}
	return times, c.err()
}
