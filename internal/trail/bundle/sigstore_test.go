package bundle

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// attest exports the test session as a Sigstore bundle, through its file
// form, and returns the file's bytes too.
func attest(t testing.TB, signer note.Signer, vkey string) (*SigstoreBundle, []byte) {
	t.Helper()
	s, err := Attest(build(t, signer), signer, vkey)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !IsSigstore(data) {
		t.Fatal("IsSigstore does not recognize the export")
	}
	s, err = ParseSigstore(data)
	if err != nil {
		t.Fatal(err)
	}
	return s, data
}

func TestSigstoreExportVerifies(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	s, data := attest(t, signer, vkey)
	st, err := VerifySigstore(s, vkey)
	if err != nil {
		t.Fatal(err)
	}
	b := build(t, signer)
	if st.Subject[0].Name != "cairn:session/A-7/merkle-root" || st.Subject[0].Digest["sha256"] != b.Root {
		t.Fatalf("root subject %+v, root %s", st.Subject[0], b.Root)
	}
	if len(st.Subject) != 5 || st.Predicate.LeafCount != 12 || len(st.Predicate.Records) != 12 {
		t.Fatalf("%d subjects, %d leaves", len(st.Subject), st.Predicate.LeafCount)
	}
	last := b.Records[len(b.Records)-1] // T-2's thought chain ends the trail
	head := st.Subject[len(st.Subject)-1]
	if head.Name != "cairn:chain/T-2/"+last.Chain+"/head" || head.Digest["sha256"] != last.Hash {
		t.Fatalf("head subject %+v, last record %s %s", head, last.Chain, last.Hash)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["mediaType"] != SigstoreMediaType || raw["dsseEnvelope"].(map[string]any)["payloadType"] != PayloadType {
		t.Fatalf("bundle %s", data)
	}
	if IsSigstore([]byte(`{"format":"` + Format + `"}`)) {
		t.Fatal("a cairn bundle taken for a Sigstore one")
	}
}

// resign replaces the statement and signs it again with the right key: what
// someone holding the key could do, which only the predicate checks catch.
func resign(t *testing.T, s *SigstoreBundle, signer note.Signer, edit func(*Statement)) {
	t.Helper()
	var st Statement
	if err := json.Unmarshal(s.DSSEEnvelope.Payload, &st); err != nil {
		t.Fatal(err)
	}
	edit(&st)
	payload, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.Sign(PAE(PayloadType, payload))
	if err != nil {
		t.Fatal(err)
	}
	s.DSSEEnvelope.Payload, s.DSSEEnvelope.Signatures[0].Sig = payload, sig
}

func TestSigstoreTamperNamed(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	_, otherKey := testKey(t)
	cases := []struct {
		name, part string
		key        string
		edit       func(*SigstoreBundle)
	}{
		{"payload byte", PartSignature, vkey, func(s *SigstoreBundle) {
			i := strings.Index(string(s.DSSEEnvelope.Payload), "Θ-")
			s.DSSEEnvelope.Payload[i+len("Θ-")] ^= 1
		}},
		{"signature byte", PartSignature, vkey, func(s *SigstoreBundle) { s.DSSEEnvelope.Signatures[0].Sig[5] ^= 1 }},
		{"key", PartSignature, otherKey, func(*SigstoreBundle) {}},
		{"key hint", PartKey, vkey, func(s *SigstoreBundle) {
			s.VerificationMaterial.PublicKey.Hint = "AAAA" + s.VerificationMaterial.PublicKey.Hint[4:]
		}},
		{"subject digest", PartSignature, vkey, func(s *SigstoreBundle) {
			i := strings.Index(string(s.DSSEEnvelope.Payload), `"sha256":"`) + len(`"sha256":"`)
			s.DSSEEnvelope.Payload[i] ^= 1
		}},
		{"payload type", PartEnvelope, vkey, func(s *SigstoreBundle) { s.DSSEEnvelope.PayloadType = "application/json" }},
		{"resigned subject digest", PartSubject, vkey, func(s *SigstoreBundle) {
			resign(t, s, signer, func(st *Statement) { st.Subject[1].Digest["sha256"] = strings.Repeat("0", 64) })
		}},
		{"resigned dropped leaf", PartSubject, vkey, func(s *SigstoreBundle) {
			resign(t, s, signer, func(st *Statement) {
				st.Predicate.Records = st.Predicate.Records[:len(st.Predicate.Records)-1]
			})
		}},
		{"resigned session scope", PartSession, vkey, func(s *SigstoreBundle) {
			resign(t, s, signer, func(st *Statement) { st.Predicate.Session.Scope = "shallow" })
		}},
		{"resigned predicate type", PartStatement, vkey, func(s *SigstoreBundle) {
			resign(t, s, signer, func(st *Statement) { st.PredicateType += "x" })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := attest(t, signer, vkey)
			tc.edit(s)
			_, err := VerifySigstore(s, tc.key)
			var ve *VerifyError
			if !errors.As(err, &ve) || !ve.Has(tc.part) {
				t.Fatalf("want a %s problem, got %v", tc.part, err)
			}
		})
	}
}

func TestAttestRefusesAnotherKeysVerifier(t *testing.T) {
	t.Parallel()
	signer, _ := testKey(t)
	_, otherKey := testKey(t)
	if _, err := Attest(build(t, signer), signer, otherKey); err == nil {
		t.Fatal("signed with a key that the given verifier key does not check")
	}
}

func TestPublicKeyPEM(t *testing.T) {
	t.Parallel()
	_, vkey := testKey(t)
	pemBytes, err := PublicKeyPEM(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(pemBytes), "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("PEM %s", pemBytes)
	}
	if _, err := PublicKey("cairn+1234+AAAA"); err == nil {
		t.Fatal("a short key accepted")
	}
	// The PEM form names the same verifier key again.
	name := strings.SplitN(vkey, "+", 2)[0]
	back, err := VerifierKeyFromPEM(name, pemBytes)
	if err != nil || back != vkey {
		t.Fatalf("VerifierKeyFromPEM = %q, %v; want %q", back, err, vkey)
	}
	for _, bad := range []string{"not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"} {
		if _, err := VerifierKeyFromPEM(name, []byte(bad)); err == nil {
			t.Errorf("VerifierKeyFromPEM accepted %q", bad)
		} else if e, ok := errs.As(err); !ok || e.Details["field"] != "key" {
			t.Errorf("VerifierKeyFromPEM(%q): %v, want a typed error naming key", bad, err)
		}
	}
}
