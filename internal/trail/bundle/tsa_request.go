package bundle

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/digitorus/timestamp"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TSATimeout bounds one request to the timestamp authority.
const TSATimeout = 10 * time.Second

// TSASetting is the setting that names the timestamp authority; errors about
// the authority name it.
const TSASetting = "CAIRN_AUDIT_TSA_URL"

// maxTSAResponse bounds the TimeStampResp read: a token with a short chain
// is a few KiB.
const maxTSAResponse = 1 << 20

// RequestTimestamp asks the RFC 3161 timestamp authority at tsaURL for a
// timestamp over sig (Sigstore's convention: the message imprint is the
// SHA-256 of the DSSE signature) and returns the DER TimeStampResp, after
// checking that it grants a token over that imprint (docs/decisions.md
// D38). Any failure is an ERR_UPSTREAM_FAILED naming the setting and URL.
func RequestTimestamp(ctx context.Context, client *http.Client, tsaURL string, sig []byte) ([]byte, error) {
	fail := func(format string, args ...any) error {
		e := errs.Newf(502, errs.UpstreamFailed, "%s %s: %s", TSASetting, tsaURL, fmt.Sprintf(format, args...))
		e.Details["setting"], e.Details["url"] = TSASetting, tsaURL
		return e
	}
	req, err := timestamp.CreateRequest(bytes.NewReader(sig), &timestamp.RequestOptions{Hash: crypto.SHA256, Certificates: true})
	if err != nil {
		return nil, fail("build the timestamp request: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, TSATimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, tsaURL, bytes.NewReader(req))
	if err != nil {
		return nil, fail("%v", err)
	}
	hreq.Header.Set("Content-Type", "application/timestamp-query")
	hreq.Header.Set("Accept", "application/timestamp-reply")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTSAResponse+1))
	if err != nil {
		return nil, fail("read the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fail("answered HTTP %d", resp.StatusCode)
	}
	if len(body) > maxTSAResponse {
		return nil, fail("answer is larger than %d bytes", maxTSAResponse)
	}
	ts, err := timestamp.ParseResponse(body)
	if err != nil {
		msg := err.Error()
		if len(msg) > 120 {
			msg = msg[:120] + "…"
		}
		return nil, fail("the %d-byte answer (Content-Type %q) is not a granted RFC 3161 timestamp response: %s", len(body), resp.Header.Get("Content-Type"), msg)
	}
	want := sha256.Sum256(sig)
	if ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, want[:]) {
		return nil, fail("the timestamp's message imprint is not the SHA-256 of the signature")
	}
	return body, nil
}
