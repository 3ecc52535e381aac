package e2e

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
)

// TestAuditSigstoreExportVerifiedByOthers exports a finalized session with
// `cairn audit export --format sigstore` and from the dashboard, and has
// sigstore-go verify both offline with nothing but the PEM key `cairn audit
// pubkey --pem` prints, as cosign does when it is installed; a flipped byte
// is refused by both sigstore-go and `cairn audit verify` (docs/decisions.md
// D38).
func TestAuditSigstoreExportVerifiedByOthers(t *testing.T) {
	a := finalizedAudit(t, "Pick a parser", "compare two parsers", "take the hand-written one")
	w, env, sess, root, pemOut, pub := a.w, a.env, a.sess, a.root, a.pem, a.pub
	keyFile := filepath.Join(w.root, "cairn-audit.pem")
	if err := os.WriteFile(keyFile, []byte(pemOut), 0o644); err != nil {
		t.Fatal(err)
	}
	// An auditor handed only the PEM key verifies the cairn format with it.
	plain := filepath.Join(w.root, sess+".json")
	if code, _, errOut := runCairn(t, w, "", env, "audit", "export", sess, "-o", plain); code != 0 {
		t.Fatalf("audit export: %d %s", code, errOut)
	}
	if code, out, errOut := runCairn(t, w, "", nil, "audit", "verify", "--key", keyFile, plain); code != 0 || !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("audit verify --key <PEM file>: %d %s %s", code, out, errOut)
	}

	exported := filepath.Join(w.root, sess+".sigstore.json")
	if code, _, errOut := runCairn(t, w, "", env, "audit", "export", sess, "--format", "sigstore", "-o", exported); code != 0 {
		t.Fatalf("audit export --format sigstore: %d %s", code, errOut)
	}
	data, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verifyWithSigstoreGo(data, pub, root)
	if err != nil {
		t.Fatalf("sigstore-go refuses the CLI export: %v", err)
	}
	st := res.Statement
	if st.PredicateType != "https://cairn.dev/attestation/decision-trail/v1" || st.Subject[0].Name != "cairn:session/"+sess+"/merkle-root" {
		t.Fatalf("statement: %s %+v", st.PredicateType, st.Subject)
	}
	t.Logf("sigstore-go verified %s: %d subjects, first %s sha256:%s", filepath.Base(exported), len(st.Subject), st.Subject[0].Name, st.Subject[0].Digest["sha256"])
	if code, out, errOut := runCairn(t, w, "", env, "audit", "verify", exported); code != 0 || !strings.HasPrefix(out, "OK: ") || !strings.Contains(out, "sigstore bundle") {
		t.Fatalf("audit verify of the Sigstore export: %d %s %s", code, out, errOut)
	} else {
		t.Logf("cairn audit verify: %s", strings.TrimSpace(out))
	}
	if code, _, errOut := runCairn(t, w, "", env, "audit", "export", sess, "--format", "intoto"); code == 0 || !strings.Contains(errOut, "format") {
		t.Errorf("an unknown --format: %d %s", code, errOut)
	}

	// The dashboard's download offers the same format.
	login := uiURL(t, w, env)
	c := loggedInClient(t, login)
	base := login[:strings.Index(login, "/login")]
	resp, err := c.Get(base + "/api/audits/" + sess + "/bundle?format=sigstore")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), sess+".sigstore.json") {
		t.Fatalf("dashboard download: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	if _, err := verifyWithSigstoreGo(body, pub, root); err != nil {
		t.Fatalf("sigstore-go refuses the dashboard's export: %v", err)
	}
	if resp, err := c.Get(base + "/api/audits/" + sess + "/bundle?format=pdf"); err != nil || resp.StatusCode != 400 {
		t.Errorf("format=pdf: %v %v, want 400", resp.StatusCode, err)
	}

	cosign := cosignVerifier(t, w)
	if cosign != nil {
		if out, err := cosign(exported, keyFile, root); err != nil {
			t.Fatalf("cosign refuses the export: %v\n%s", err, out)
		} else {
			t.Logf("cosign verify-blob-attestation: %s", strings.TrimSpace(out))
		}
		if out, err := cosign(exported, keyFile, strings.Repeat("0", 64)); err == nil {
			t.Errorf("cosign accepted a subject digest that is not the session's root: %s", out)
		}
	}

	// A flipped payload byte: both verifiers refuse.
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	envl := raw["dsseEnvelope"].(map[string]any)
	payload, _ := base64.StdEncoding.DecodeString(envl["payload"].(string))
	payload[len(payload)/2] ^= 1
	envl["payload"] = base64.StdEncoding.EncodeToString(payload)
	tampered, _ := json.Marshal(raw)
	if _, err := verifyWithSigstoreGo(tampered, pub, root); err == nil {
		t.Error("sigstore-go accepted a flipped payload byte")
	}
	bad := filepath.Join(w.root, "tampered.sigstore.json")
	if err := os.WriteFile(bad, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCairn(t, w, "", env, "audit", "verify", bad); code == 0 || !strings.Contains(errOut, "signature") {
		t.Errorf("audit verify of a flipped payload byte: %d %s", code, errOut)
	}

	// A flipped signature byte, and a key that is not the signer's: both
	// verifiers refuse each, as they refuse the flipped payload.
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	sigs := raw["dsseEnvelope"].(map[string]any)["signatures"].([]any)
	sig, _ := base64.StdEncoding.DecodeString(sigs[0].(map[string]any)["sig"].(string))
	sig[len(sig)/2] ^= 1
	sigs[0].(map[string]any)["sig"] = base64.StdEncoding.EncodeToString(sig)
	flippedSig, _ := json.Marshal(raw)
	if _, err := verifyWithSigstoreGo(flippedSig, pub, root); err == nil {
		t.Error("sigstore-go accepted a flipped signature byte")
	}
	badSig := filepath.Join(w.root, "flipped-sig.sigstore.json")
	if err := os.WriteFile(badSig, flippedSig, 0o644); err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifyWithSigstoreGo(data, otherPub, root); err == nil {
		t.Error("sigstore-go accepted the export under a key that did not sign it")
	}
	der, err := x509.MarshalPKIXPublicKey(otherPub)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(w.root, "other.pem")
	if err := os.WriteFile(otherKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if cosign != nil {
		for _, c := range []struct{ what, bundle, key string }{
			{"a flipped payload byte", bad, keyFile},
			{"a flipped signature byte", badSig, keyFile},
			{"a key that did not sign it", exported, otherKey},
		} {
			if out, err := cosign(c.bundle, c.key, root); err == nil {
				t.Errorf("cosign accepted %s: %s", c.what, out)
			} else {
				t.Logf("cosign refuses %s: %s", c.what, lastLine(out))
			}
		}
	}
}

// auditFixture is a workspace whose shared daemon holds one finalized
// audit session over a task with decisions, and the verifier key as
// `cairn audit pubkey --pem` prints it.
type auditFixture struct {
	w               *workspace
	env             []string
	sess, root, pem string
	pub             ed25519.PublicKey
}

func finalizedAudit(t *testing.T, title string, decisions ...string) auditFixture {
	t.Helper()
	a := auditFixture{w: newWorkspace(t), env: []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=60s", "CAIRN_PROJECT=web"}}
	t.Cleanup(func() { runCairn(t, a.w, "", a.env, "stop") })
	agent := a.w.serve(append(a.env, "CAIRN_AGENT_ID=agent-a")...)
	id := taskID(t, agent, map[string]any{"title": title, "project": "web"})
	for _, c := range decisions {
		ok(t, agent, "thought_record", map[string]any{"task_id": id, "type": "decision", "content": c})
	}
	a.sess = ok(t, agent, "audit_session_start", map[string]any{"task_id": id, "auditor_id": "reviewer"})["session_id"].(string)
	a.root = ok(t, agent, "merkle_finalize", map[string]any{"session_id": a.sess})["merkle_root"].(string)
	agent.close()
	code, out, errOut := runCairn(t, a.w, "", a.env, "audit", "pubkey", "--pem")
	if code != 0 || !strings.HasPrefix(out, "-----BEGIN PUBLIC KEY-----") {
		t.Fatalf("audit pubkey --pem: %d %q %s", code, out, errOut)
	}
	a.pem, a.pub = out, parsePEM(t, out)
	return a
}

func parsePEM(t *testing.T, s string) ed25519.PublicKey {
	t.Helper()
	blk, _ := pem.Decode([]byte(s))
	if blk == nil || blk.Type != "PUBLIC KEY" {
		t.Fatalf("not a PEM PUBLIC KEY block: %q", s)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub, isEd := k.(ed25519.PublicKey)
	if !isEd {
		t.Fatalf("key is %T, want ed25519", k)
	}
	return pub
}

// verifyWithSigstoreGo trusts only pub, under the hint sigstore-go's own
// signer would give it (bundle.KeyHint), and requires the session root as
// the attested digest: no certificate, log or timestamp.
func verifyWithSigstoreGo(data []byte, pub ed25519.PublicKey, rootHex string) (*verify.VerificationResult, error) {
	return sigstoreGoVerify(data, pub, rootHex, nil, verify.WithNoObserverTimestamps())
}

// sigstoreGoVerify verifies an exported bundle with sigstore-go trusting
// pub and, when set, also, under the verifier option opt.
func sigstoreGoVerify(data []byte, pub ed25519.PublicKey, rootHex string, also root.TrustedMaterial, opt verify.VerifierOption) (*verify.VerificationResult, error) {
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	v, err := signature.LoadED25519Verifier(pub)
	if err != nil {
		return nil, err
	}
	var trusted root.TrustedMaterial = root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{
		bundle.KeyHint(pub): root.NewExpiringKey(v, time.Time{}, time.Time{}),
	})
	if also != nil {
		trusted = root.TrustedMaterialCollection{trusted, also}
	}
	verifier, err := verify.NewVerifier(trusted, opt)
	if err != nil {
		return nil, err
	}
	digest, err := hex.DecodeString(rootHex)
	if err != nil {
		return nil, err
	}
	return verifier.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), verify.WithKey()))
}

// cosignVerifier returns a run of cosign's verify-blob-attestation when
// cosign is installed (CAIRN_COSIGN or PATH; .ci/run builds it from the
// module proxy), nil otherwise. cosign wants a trusted root even for a
// key: an empty one, so that nothing but the key is trusted.
func cosignVerifier(t *testing.T, w *workspace) func(bundlePath, keyFile, digest string) (string, error) {
	t.Helper()
	bin := os.Getenv("CAIRN_COSIGN")
	if bin == "" {
		bin, _ = exec.LookPath("cosign")
	}
	if bin == "" {
		t.Log("cosign is not installed (set CAIRN_COSIGN or put it on PATH): skipping the cosign checks")
		return nil
	}
	trustedRoot := filepath.Join(w.root, "trusted_root.json")
	if err := os.WriteFile(trustedRoot, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(bundlePath, keyFile, digest string) (string, error) {
		cmd := exec.Command(bin, "verify-blob-attestation", "--key", keyFile, "--bundle", bundlePath,
			"--new-bundle-format", "--insecure-ignore-tlog", "--trusted-root", trustedRoot,
			"--type", "https://cairn.dev/attestation/decision-trail/v1", "--digest", digest, "--digestAlg", "sha256")
		cmd.Env = append(os.Environ(), "TUF_ROOT="+filepath.Join(w.root, "tuf"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// lastLine is the last non-empty line of out, where cosign says why.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
