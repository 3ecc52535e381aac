package bundle

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"golang.org/x/mod/sumdb/note"
)

// sigstoreGoVerify checks a cairn Sigstore export with sigstore-go alone,
// offline, trusting only the public key (under the hint the bundle names)
// and requiring the session root as the attested artifact digest
// (docs/decisions.md D38): no certificate, no log, no timestamp.
func sigstoreGoVerify(t *testing.T, data []byte, pub ed25519.PublicKey, hint string, rootHex string) (*verify.VerificationResult, error) {
	t.Helper()
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	v, err := signature.LoadED25519Verifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	trusted := root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{
		hint: root.NewExpiringKey(v, time.Time{}, time.Time{}),
	})
	verifier, err := verify.NewVerifier(trusted, verify.WithNoObserverTimestamps())
	if err != nil {
		t.Fatal(err)
	}
	digest, err := hex.DecodeString(rootHex)
	if err != nil {
		t.Fatal(err)
	}
	return verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), verify.WithKey()))
}

func TestSigstoreGoAcceptsExport(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	_, data := attest(t, signer, vkey)
	pub, err := PublicKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	b := build(t, signer)
	res, err := sigstoreGoVerify(t, data, pub, KeyHint(pub), b.Root)
	if err != nil {
		t.Fatalf("sigstore-go refuses the export: %v", err)
	}
	st := res.Statement
	if st == nil || st.PredicateType != PredicateType || len(st.Subject) != 5 {
		t.Fatalf("statement %+v", st)
	}
	if st.Subject[0].Name != RootSubject("A-7") || st.Subject[0].Digest["sha256"] != b.Root {
		t.Fatalf("root subject %+v", st.Subject[0])
	}
	for i, s := range st.Subject[1:] {
		want := NewStatement(b).Subject[i+1]
		if s.Name != want.Name || s.Digest["sha256"] != want.Digest["sha256"] {
			t.Fatalf("subject %d: %+v, want %+v", i+1, s, want)
		}
	}
	out, _ := json.Marshal(res)
	t.Logf("sigstore-go: %s", out)
}

// TestSigstoreGoRefusesTamper flips each class of byte and expects
// sigstore-go and cairn's own verifier both to refuse.
func TestSigstoreGoRefusesTamper(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	pub, err := PublicKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	rootHex := build(t, signer).Root
	flipped := append(ed25519.PublicKey(nil), pub...)
	flipped[7] ^= 1
	otherVkey, err := note.NewEd25519VerifierKey("cairn", flipped)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(s *SigstoreBundle)
		pub  ed25519.PublicKey
		vkey string
		root string
	}{
		{name: "payload", edit: func(s *SigstoreBundle) {
			i := strings.Index(string(s.DSSEEnvelope.Payload), "recordedBy")
			s.DSSEEnvelope.Payload[i+len(`recordedBy":"`)] ^= 1
		}},
		{name: "signature", edit: func(s *SigstoreBundle) { s.DSSEEnvelope.Signatures[0].Sig[0] ^= 1 }},
		{name: "key", pub: flipped, vkey: otherVkey},
		{name: "subject digest in the signed payload", edit: func(s *SigstoreBundle) {
			i := strings.Index(string(s.DSSEEnvelope.Payload), `"sha256":"`) + len(`"sha256":"`)
			s.DSSEEnvelope.Payload[i] ^= 1
		}},
		{name: "subject digest re-signed", edit: func(s *SigstoreBundle) {
			resign(t, s, signer, func(st *Statement) { st.Subject[0].Digest["sha256"] = strings.Repeat("ab", 32) })
		}},
		{name: "expected root", root: strings.Repeat("cd", 32)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := attest(t, signer, vkey)
			if tc.edit != nil {
				tc.edit(s)
			}
			data, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			p, k, r := pub, vkey, rootHex
			if tc.pub != nil {
				p, k = tc.pub, tc.vkey
			}
			if tc.root != "" {
				r = tc.root
			}
			// The hint names the key the bundle claims; trusting another
			// key under it is the "wrong key" case.
			if _, err := sigstoreGoVerify(t, data, p, s.VerificationMaterial.PublicKey.Hint, r); err == nil {
				t.Fatal("sigstore-go accepted it")
			} else {
				t.Logf("sigstore-go: %v", err)
			}
			if tc.root != "" {
				return // cairn recomputes the root rather than taking one
			}
			if _, err := VerifySigstore(s, k); err == nil {
				t.Fatal("cairn accepted it")
			} else {
				t.Logf("cairn: %v", err)
			}
		})
	}
}
