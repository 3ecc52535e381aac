package bundle

import (
	"context"

	"golang.org/x/mod/sumdb/note"
)

// AnchoredSigstore attests b as a Sigstore bundle and anchors it in the
// operator's RFC 3161 timestamp authority (docs/decisions.md D38): the
// authority stamps the DSSE signature, and the token goes into the bundle.
// A failed request fails the export (ERR_UPSTREAM_FAILED naming the
// URL): nothing unanchored is handed out. `cairn audit export` and the
// dashboard's download both use it.
func AnchoredSigstore(ctx context.Context, b *Bundle, signer note.Signer, vkey, tsaURL string) ([]byte, error) {
	s, err := Attest(b, signer, vkey)
	if err != nil {
		return nil, err
	}
	sig, err := s.Signature()
	if err != nil {
		return nil, err
	}
	tsr, err := RequestTimestamp(ctx, nil, tsaURL, sig)
	if err != nil {
		return nil, err
	}
	s.AddTimestamp(tsr)
	return s.Marshal()
}
