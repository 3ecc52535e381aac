package bundle

// Summary says what a verified (or at least parsed) bundle file proves.
type Summary struct {
	Format    string // ExportCairn or ExportSigstore
	SessionID string
	Records   int
	Root      string
}

// VerifyFile checks a bundle file of either format, told apart by the
// Sigstore mediaType field (docs/decisions.md D38), against verifierKey. The
// summary is nil only when the file does not parse; the error is then the
// parse error, else nil or a *VerifyError.
func VerifyFile(data []byte, verifierKey string) (*Summary, error) {
	if IsSigstore(data) {
		s, err := ParseSigstore(data)
		if err != nil {
			return nil, err
		}
		st, err := VerifySigstore(s, verifierKey)
		sum := &Summary{Format: ExportSigstore}
		if st != nil && st.Predicate != nil {
			sum.SessionID, sum.Records = st.Predicate.Session.ID, len(st.Predicate.Records)
			for _, sub := range st.Subject {
				if sub.Name == RootSubject(sum.SessionID) {
					sum.Root = sub.Digest["sha256"]
				}
			}
		}
		return sum, err
	}
	b, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return &Summary{Format: ExportCairn, SessionID: b.Session.SessionID, Records: len(b.Records), Root: b.Root}, VerifyBundle(b, verifierKey)
}
