package bundle

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/cairn-mcp/cairn/internal/trail/bundle/tsatest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// tsaMaterial trusts one timestamp authority, nothing else.
type tsaMaterial struct {
	root.BaseTrustedMaterial
	tsa root.TimestampingAuthority
}

func (m *tsaMaterial) TimestampingAuthorities() []root.TimestampingAuthority {
	return []root.TimestampingAuthority{m.tsa}
}

// sigstoreGoVerifyStamped checks an anchored export with sigstore-go,
// trusting the public key and the test TSA's root, and requiring one
// verified RFC 3161 timestamp (docs/decisions.md D38).
func sigstoreGoVerifyStamped(t *testing.T, data []byte, pub ed25519.PublicKey, tsa *tsatest.TSA, rootHex string) (*verify.VerificationResult, error) {
	t.Helper()
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	v, err := signature.LoadED25519Verifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	trusted := root.TrustedMaterialCollection{
		root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{
			KeyHint(pub): root.NewExpiringKey(v, time.Time{}, time.Time{}),
		}),
		&tsaMaterial{tsa: &root.SigstoreTimestampingAuthority{Root: tsa.Root, Leaf: tsa.Leaf, URI: tsa.URL}},
	}
	verifier, err := verify.NewVerifier(trusted, verify.WithSignedTimestamps(1))
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := hex.DecodeString(rootHex)
	return verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), verify.WithKey()))
}

// stamped attests the test session and anchors it in tsa.
func stamped(t *testing.T, tsa *tsatest.TSA) (*SigstoreBundle, ed25519.PublicKey, string, string) {
	t.Helper()
	signer, vkey := testKey(t)
	s, _ := attest(t, signer, vkey)
	sig, err := s.Signature()
	if err != nil {
		t.Fatal(err)
	}
	tsr, err := RequestTimestamp(context.Background(), nil, tsa.URL, sig)
	if err != nil {
		t.Fatal(err)
	}
	s.AddTimestamp(tsr)
	pub, err := PublicKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, pub, vkey, build(t, signer).Root
}

func TestTimestampAnchorsExport(t *testing.T) {
	t.Parallel()
	tsa := tsatest.New(t)
	before := time.Now().Add(-time.Second)
	s, pub, vkey, rootHex := stamped(t, tsa)
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"timestampVerificationData": {`) || !strings.Contains(string(data), `"signedTimestamp": "`) {
		t.Fatalf("no timestamp in the bundle:\n%s", data)
	}
	back, err := ParseSigstore(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySigstore(back, vkey); err != nil {
		t.Fatalf("cairn refuses the anchored bundle: %v", err)
	}
	for name, pemData := range map[string][]byte{"chain": tsa.ChainPEM, "root only": tsa.RootPEM} {
		chain, err := ParseTSAChain(pemData, "--tsa-cert")
		if err != nil {
			t.Fatal(err)
		}
		times, err := VerifyTimestamps(back, chain)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(times) != 1 || times[0].Before(before.Truncate(time.Second)) || times[0].After(time.Now().Add(time.Second)) {
			t.Fatalf("%s: times %v", name, times)
		}
	}
	res, err := sigstoreGoVerifyStamped(t, data, pub, tsa, rootHex)
	if err != nil {
		t.Fatalf("sigstore-go refuses the anchored bundle: %v", err)
	}
	if len(res.VerifiedTimestamps) != 1 || res.VerifiedTimestamps[0].Type != "TimestampAuthority" {
		t.Fatalf("sigstore-go verified timestamps %+v", res.VerifiedTimestamps)
	}
	t.Logf("sigstore-go verified timestamp: %+v", res.VerifiedTimestamps[0])
}

// TestTimestampTamperRefused flips a byte of the token (in the signed
// message imprint, and in the TSA's signature) and expects sigstore-go and
// cairn to refuse it; a token over another signature is refused too.
func TestTimestampTamperRefused(t *testing.T) {
	t.Parallel()
	tsa := tsatest.New(t)
	cases := map[string]func(s *SigstoreBundle){
		"imprint": func(s *SigstoreBundle) {
			tok := s.Timestamps()[0].SignedTimestamp
			sum := sha256.Sum256(s.DSSEEnvelope.Signatures[0].Sig)
			i := bytes.Index(tok, sum[:])
			if i < 0 {
				t.Fatal("imprint not in the token")
			}
			tok[i+3] ^= 1
		},
		"tsa signature": func(s *SigstoreBundle) {
			tok := s.Timestamps()[0].SignedTimestamp
			tok[len(tok)-2] ^= 1
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			s, pub, _, rootHex := stamped(t, tsa)
			edit(s)
			data, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sigstoreGoVerifyStamped(t, data, pub, tsa, rootHex); err == nil {
				t.Fatal("sigstore-go accepted it")
			} else {
				t.Logf("sigstore-go: %v", err)
			}
			chain, err := ParseTSAChain(tsa.ChainPEM, "--tsa-cert")
			if err != nil {
				t.Fatal(err)
			}
			var ve *VerifyError
			if _, err := VerifyTimestamps(s, chain); !errors.As(err, &ve) || ve.Problems[0].Part != PartTimestamp {
				t.Fatalf("cairn: %v", err)
			} else {
				t.Logf("cairn: %v", err)
			}
		})
	}
	t.Run("another TSA", func(t *testing.T) {
		s, _, _, _ := stamped(t, tsa)
		chain, err := ParseTSAChain(tsatest.New(t).ChainPEM, "--tsa-cert")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyTimestamps(s, chain); err == nil {
			t.Fatal("a token of another TSA verified")
		}
	})
	t.Run("another signature", func(t *testing.T) {
		s, _, _, _ := stamped(t, tsa)
		s.DSSEEnvelope.Signatures[0].Sig[0] ^= 1
		chain, _ := ParseTSAChain(tsa.ChainPEM, "--tsa-cert")
		if _, err := VerifyTimestamps(s, chain); err == nil {
			t.Fatal("a token over another signature verified")
		}
	})
}

func TestRequestTimestampFailures(t *testing.T) {
	t.Parallel()
	tsa := tsatest.New(t)
	down := tsatest.New(t)
	down.Close()
	for _, tc := range []struct{ name, fail, url string }{
		{"500", "500", tsa.URL},
		{"garbage", "garbage", tsa.URL},
		{"unreachable", "", down.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tsa.Fail.Store(tc.fail)
			_, err := RequestTimestamp(context.Background(), nil, tc.url, []byte("sig"))
			var e *errs.Error
			if !errors.As(err, &e) || e.Code != errs.UpstreamFailed || e.Details["setting"] != TSASetting || e.Details["url"] != tc.url || !strings.Contains(e.Message, tc.url) {
				t.Fatalf("err %#v", err)
			}
			t.Logf("%v", err)
		})
	}
}

func TestParseTSAChainRefusesNoRoot(t *testing.T) {
	t.Parallel()
	for _, data := range [][]byte{nil, []byte("not pem")} {
		var e *errs.Error
		if _, err := ParseTSAChain(data, "--tsa-cert"); !errors.As(err, &e) || e.Details["field"] != "--tsa-cert" {
			t.Fatalf("err %v", err)
		}
	}
}

// TestTrustedRootJSONNamesTheTSA: the trusted_root.json that
// docs/decision-trail.md shows for cosign and sigstore-go (the TSA's chain,
// leaf first, under timestampAuthorities) verifies an anchored export.
func TestTrustedRootJSONNamesTheTSA(t *testing.T) {
	t.Parallel()
	tsa := tsatest.New(t)
	s, pub, _, rootHex := stamped(t, tsa)
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	enc := func(der []byte) string { return base64.StdEncoding.EncodeToString(der) }
	trJSON := fmt.Sprintf(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1",
  "timestampAuthorities":[{"subject":{"organization":"example","commonName":"cairn test TSA"},"uri":%q,
    "certChain":{"certificates":[{"rawBytes":%q},{"rawBytes":%q}]},"validFor":{"start":"2020-01-01T00:00:00Z"}}]}`,
		tsa.URL, enc(tsa.Leaf.Raw), enc(tsa.Root.Raw))
	tr, err := root.NewTrustedRootFromJSON([]byte(trJSON))
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.LoadED25519Verifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	trusted := root.TrustedMaterialCollection{
		root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{KeyHint(pub): root.NewExpiringKey(v, time.Time{}, time.Time{})}),
		tr,
	}
	verifier, err := verify.NewVerifier(trusted, verify.WithSignedTimestamps(1))
	if err != nil {
		t.Fatal(err)
	}
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	digest, _ := hex.DecodeString(rootHex)
	res, err := verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), verify.WithKey()))
	if err != nil || len(res.VerifiedTimestamps) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
}
