// Package tsatest runs an RFC 3161 timestamp authority on a local httptest
// server for tests of anchored audit exports (docs/decisions.md D38):
// a self-signed CA, a leaf with the timestamping usage, and answers made by
// github.com/digitorus/timestamp. Nothing reaches the internet.
package tsatest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digitorus/timestamp"
)

// TSA is a running test timestamp authority.
type TSA struct {
	*httptest.Server
	Root, Leaf *x509.Certificate
	// ChainPEM holds the root and the leaf, as `cairn audit verify
	// --tsa-cert` takes them.
	ChainPEM []byte
	// RootPEM holds the root alone.
	RootPEM []byte
	// Fail, when set, makes the next answers HTTP 500 ("500") or 200 with
	// garbage ("garbage").
	Fail atomic.Value
	// Requests counts the requests answered.
	Requests atomic.Int64
}

// New starts a TSA closed at the end of the test.
func New(t testing.TB) *TSA {
	t.Helper()
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rootTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cairn test TSA root"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, rootKey.Public(), rootKey)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := x509.ParseCertificate(rootDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 3161 2.3: the timestamping usage is the only one, and critical.
	eku, err := asn1.Marshal([]asn1.ObjectIdentifier{{1, 3, 6, 1, 5, 5, 7, 3, 8}})
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: "cairn test TSA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping},
		ExtraExtensions:       []pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Critical: true, Value: eku}},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, root, leafKey.Public(), rootKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(leafDER)
	rootPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER})
	tsa := &TSA{Root: root, Leaf: leaf, RootPEM: rootPEM,
		ChainPEM: append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), rootPEM...)}
	tsa.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tsa.Requests.Add(1)
		switch tsa.Fail.Load() {
		case "500":
			http.Error(w, "TSA down", http.StatusInternalServerError)
			return
		case "garbage":
			w.Header().Set("Content-Type", "application/timestamp-reply")
			_, _ = w.Write([]byte("not a timestamp response"))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/timestamp-query" {
			http.Error(w, "want a POSTed application/timestamp-query", http.StatusBadRequest)
			return
		}
		req, err := timestamp.ParseRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ts := &timestamp.Timestamp{
			HashAlgorithm:     req.HashAlgorithm,
			HashedMessage:     req.HashedMessage,
			Time:              time.Now(),
			Nonce:             req.Nonce,
			Policy:            []int{1, 3, 6, 1, 4, 1, 57264, 2},
			Ordering:          true,
			Qualified:         false,
			AddTSACertificate: req.Certificates,
		}
		resp, err := ts.CreateResponseWithOpts(leaf, leafKey, crypto.SHA256)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/timestamp-reply")
		_, _ = w.Write(resp)
	}))
	t.Cleanup(tsa.Close)
	return tsa
}
