package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/cairn-mcp/cairn/internal/trail/bundle/tsatest"
)

// TestAuditSigstoreExportAnchoredInTSA exports a finalized session with
// CAIRN_AUDIT_TSA_URL naming a local RFC 3161 timestamp authority: sigstore-go
// verifies the bundle trusting the public key and that authority, requiring
// one signed timestamp, and `cairn audit verify --tsa-cert` prints the
// stamped time; a flipped byte in the token is refused by both, and an
// authority answering 500 or garbage fails the export naming its URL
// (docs/decisions.md D38). Nothing reaches the internet.
func TestAuditSigstoreExportAnchoredInTSA(t *testing.T) {
	a := finalizedAudit(t, "Pick a clock", "stamp the export")
	w, env, sess, rootHex, pub := a.w, a.env, a.sess, a.root, a.pub

	tsa := tsatest.New(t)
	chainFile := filepath.Join(w.root, "tsa-chain.pem")
	if err := os.WriteFile(chainFile, tsa.ChainPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	tsaEnv := append(append([]string(nil), env...), "CAIRN_AUDIT_TSA_URL="+tsa.URL)
	exported := filepath.Join(w.root, sess+".sigstore.json")
	if code, _, errOut := runCairn(t, w, "", tsaEnv, "audit", "export", sess, "--format", "sigstore", "-o", exported); code != 0 {
		t.Fatalf("anchored audit export: %d %s", code, errOut)
	}
	if tsa.Requests.Load() != 1 {
		t.Fatalf("the TSA was asked %d times, want 1", tsa.Requests.Load())
	}
	data, err := os.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verifyStampedWithSigstoreGo(data, pub, tsa, rootHex)
	if err != nil {
		t.Fatalf("sigstore-go refuses the anchored export: %v", err)
	}
	if len(res.VerifiedTimestamps) != 1 || time.Since(res.VerifiedTimestamps[0].Timestamp) > time.Minute {
		t.Fatalf("sigstore-go verified timestamps %+v", res.VerifiedTimestamps)
	}
	t.Logf("sigstore-go verified %s with a signed timestamp: %+v", filepath.Base(exported), res.VerifiedTimestamps[0])

	code, out, errOut := runCairn(t, w, "", env, "audit", "verify", exported)
	if code != 0 || !strings.Contains(out, "present but unchecked") {
		t.Fatalf("audit verify without --tsa-cert: %d %s %s", code, out, errOut)
	}
	t.Logf("cairn audit verify: %s", strings.TrimSpace(out))
	code, out, errOut = runCairn(t, w, "", env, "audit", "verify", exported, "--tsa-cert", chainFile)
	if code != 0 || !strings.HasPrefix(out, "OK: ") || !strings.Contains(out, "\ntimestamp: ") {
		t.Fatalf("audit verify --tsa-cert: %d %s %s", code, out, errOut)
	}
	t.Logf("cairn audit verify --tsa-cert: %s", strings.TrimSpace(out))

	// A flipped byte in the token's message imprint: both refuse.
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	vm := raw["verificationMaterial"].(map[string]any)
	stamp := vm["timestampVerificationData"].(map[string]any)["rfc3161Timestamps"].([]any)[0].(map[string]any)
	token, _ := base64.StdEncoding.DecodeString(stamp["signedTimestamp"].(string))
	sig, _ := base64.StdEncoding.DecodeString(raw["dsseEnvelope"].(map[string]any)["signatures"].([]any)[0].(map[string]any)["sig"].(string))
	imprint := sha256.Sum256(sig)
	i := bytes.Index(token, imprint[:])
	if i < 0 {
		t.Fatal("the token does not stamp the SHA-256 of the DSSE signature")
	}
	token[i+5] ^= 1
	stamp["signedTimestamp"] = base64.StdEncoding.EncodeToString(token)
	tampered, _ := json.Marshal(raw)
	if _, err := verifyStampedWithSigstoreGo(tampered, pub, tsa, rootHex); err == nil {
		t.Error("sigstore-go accepted a flipped byte in the timestamp")
	} else {
		t.Logf("sigstore-go refuses the flipped token: %v", err)
	}
	bad := filepath.Join(w.root, "tampered.sigstore.json")
	if err := os.WriteFile(bad, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCairn(t, w, "", env, "audit", "verify", bad, "--tsa-cert", chainFile); code == 0 || !strings.Contains(errOut, "timestamp") {
		t.Errorf("audit verify --tsa-cert of a flipped token byte: %d %s", code, errOut)
	} else {
		t.Logf("cairn audit verify --tsa-cert refuses the flipped token: %s", strings.TrimSpace(errOut))
	}

	// An authority that answers 500 or garbage fails the export, naming
	// its URL, and writes nothing; --no-timestamp exports without it.
	for _, fail := range []string{"500", "garbage"} {
		tsa.Fail.Store(fail)
		out := filepath.Join(w.root, "failed-"+fail+".sigstore.json")
		code, _, errOut := runCairn(t, w, "", tsaEnv, "audit", "export", sess, "--format", "sigstore", "-o", out)
		if code == 0 || !strings.Contains(errOut, "ERR_UPSTREAM_FAILED") || !strings.Contains(errOut, tsa.URL) {
			t.Errorf("export with a TSA answering %s: %d %s", fail, code, errOut)
		} else {
			t.Logf("TSA answering %s: exit %d: %s", fail, code, strings.TrimSpace(errOut))
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a failed anchored export wrote %s", out)
		}
	}
	plain := filepath.Join(w.root, "plain.sigstore.json")
	if code, _, errOut := runCairn(t, w, "", tsaEnv, "audit", "export", sess, "--format", "sigstore", "--no-timestamp", "-o", plain); code != 0 {
		t.Fatalf("--no-timestamp: %d %s", code, errOut)
	}
	if p, _ := os.ReadFile(plain); bytes.Contains(p, []byte("timestampVerificationData")) {
		t.Error("--no-timestamp wrote a timestamp")
	}
	if code, _, errOut := runCairn(t, w, "", append(env, "CAIRN_AUDIT_TSA_URL=tsa.internal"), "audit", "export", sess, "--format", "sigstore", "-o", plain); code == 0 || !strings.Contains(errOut, "CAIRN_AUDIT_TSA_URL") {
		t.Errorf("a CAIRN_AUDIT_TSA_URL that is no URL: %d %s", code, errOut)
	}

	// The dashboard's download of a daemon run with the setting is anchored
	// the same way, and fails the same way.
	stopDaemon(w)
	tsa.Fail.Store("")
	login := uiURL(t, w, tsaEnv)
	c := loggedInClient(t, login)
	download := login[:strings.Index(login, "/login")] + "/api/audits/" + sess + "/bundle?format=sigstore"
	before := tsa.Requests.Load()
	resp, err := c.Get(download)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || tsa.Requests.Load() != before+1 {
		t.Fatalf("dashboard download: %d after %d TSA requests: %s", resp.StatusCode, tsa.Requests.Load()-before, body)
	}
	if res, err := verifyStampedWithSigstoreGo(body, pub, tsa, rootHex); err != nil || len(res.VerifiedTimestamps) != 1 {
		t.Fatalf("sigstore-go on the dashboard's anchored download: %v", err)
	}
	tsa.Fail.Store("500")
	resp, err = c.Get(download)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !bytes.Contains(body, []byte("ERR_UPSTREAM_FAILED")) || !bytes.Contains(body, []byte(tsa.URL)) {
		t.Errorf("dashboard download with the TSA failing: %d %s", resp.StatusCode, body)
	}
}

// tsaTrust trusts one timestamp authority and nothing else.
type tsaTrust struct {
	root.BaseTrustedMaterial
	tsa root.TimestampingAuthority
}

func (m *tsaTrust) TimestampingAuthorities() []root.TimestampingAuthority {
	return []root.TimestampingAuthority{m.tsa}
}

// verifyStampedWithSigstoreGo trusts pub (under its Sigstore hint) and the
// test TSA's root and leaf, and requires one verified RFC 3161 timestamp
// over the signature and the session root as the attested digest.
func verifyStampedWithSigstoreGo(data []byte, pub ed25519.PublicKey, tsa *tsatest.TSA, rootHex string) (*verify.VerificationResult, error) {
	return sigstoreGoVerify(data, pub, rootHex,
		&tsaTrust{tsa: &root.SigstoreTimestampingAuthority{Root: tsa.Root, Leaf: tsa.Leaf, URI: tsa.URL}},
		verify.WithSignedTimestamps(1))
}
