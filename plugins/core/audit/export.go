package audit

import "github.com/cairn-mcp/cairn/internal/trail/bundle"

// ExportInput is audit_export's input: a finalized session.
type ExportInput struct {
	SessionID string `json:"session_id"`
}

// ExportOutput is audit_export's output: what a proof bundle is built from
// (the session, its frozen records with their hash inputs, and the frozen
// root). The host signs it: the signing key belongs to the data dir's
// operator, never to a plugin.
type ExportOutput struct {
	Session bundle.Session  `json:"session"`
	Records []bundle.Record `json:"records"`
	Root    string          `json:"root"`
}

// ExportParts is Export as one value, for the audit_export tool.
func (s *Service) ExportParts(in ExportInput) (ExportOutput, error) {
	meta, records, root, err := s.Export(in.SessionID)
	if err != nil {
		return ExportOutput{}, err
	}
	return ExportOutput{Session: meta, Records: records, Root: root}, nil
}
