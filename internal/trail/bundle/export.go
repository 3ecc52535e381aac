package bundle

import (
	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Export formats: cairn's own bundle (the default) or a Sigstore bundle
// (docs/decisions.md D38).
const (
	ExportCairn    = "cairn"
	ExportSigstore = "sigstore"
)

// Encode writes a built bundle in the chosen export format; field names the
// flag or parameter that chose it, for the error.
func Encode(b *Bundle, format, field string, signer note.Signer, verifierKey string) ([]byte, error) {
	switch format {
	case "", ExportCairn:
		return b.Marshal()
	case ExportSigstore:
		s, err := Attest(b, signer, verifierKey)
		if err != nil {
			return nil, err
		}
		return s.Marshal()
	}
	return nil, errs.Invalidf(field, "enum", "format %q is neither %q nor %q", format, ExportCairn, ExportSigstore)
}

// FileName is the default file name of a session's export:
// <id>.proof.json, or <id>.sigstore.json as cosign names Sigstore bundles.
func FileName(sessionID, format string) string {
	if format == ExportSigstore {
		return sessionID + ".sigstore.json"
	}
	return sessionID + ".proof.json"
}
