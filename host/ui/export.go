package ui

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ExportTool is the core tool (internal toolset) that hands a finalized
// session's frozen records to the daemon, which signs them as `cairn audit
// export` does: the core store is held by the core plugin, so the dashboard
// cannot open it, and the signing key stays with the host.
const ExportTool = "audit_export"

// exportParts is audit_export's output: what a proof bundle is built from.
type exportParts struct {
	Session bundle.Session  `json:"session"`
	Records []bundle.Record `json:"records"`
	Root    string          `json:"root"`
}

// bundle answers the signed proof bundle of a finalized session as a
// download, built and signed by the same code as `cairn audit export`;
// ?format=sigstore answers the Sigstore bundle (docs/decisions.md D38),
// anchored in the operator's timestamp authority when one is set.
func (s *Server) bundle(w http.ResponseWriter, r *http.Request) {
	g := grantFrom(r.Context())
	id := r.PathValue("id")
	format := r.URL.Query().Get("format")
	if format != "" && format != bundle.ExportCairn && format != bundle.ExportSigstore {
		writeErr(w, errs.Invalidf("format", "enum", "format %q is neither %q nor %q", format, bundle.ExportCairn, bundle.ExportSigstore))
		return
	}
	var out exportParts
	if e := s.callInternal(r.Context(), g, ExportTool, map[string]any{"session_id": id}, &out); e != nil {
		writeErr(w, e)
		return
	}
	signer, vkey, err := bundle.LoadOrCreateKey(bundle.KeyPath(s.cfg.DataDir, s.cfg.KeyFile), s.cfg.KeyName)
	if err != nil {
		writeErr(w, errs.New(500, errs.Internal, err.Error()))
		return
	}
	b, err := bundle.BuildBundle(out.Session, out.Records, out.Root, signer)
	if err != nil { // the stored trail no longer verifies: refuse to sign it
		writeErr(w, errs.New(409, errs.Conflict, err.Error()))
		return
	}
	var data []byte
	if format == bundle.ExportSigstore && s.cfg.TSAURL != "" {
		data, err = bundle.AnchoredSigstore(r.Context(), b, signer, vkey, s.cfg.TSAURL)
	} else {
		data, err = bundle.Encode(b, format, "format", signer, vkey)
	}
	if err != nil {
		e, ok := errs.As(err)
		if !ok {
			e = errs.New(500, errs.Internal, err.Error())
		}
		writeErr(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", bundle.FileName(out.Session.SessionID, format)))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(data)
}

// MaxBundle bounds an uploaded bundle.
const MaxBundle = 64 << 20

// verifyResult is what the audits page shows for an uploaded bundle.
type verifyResult struct {
	OK        bool     `json:"ok"`
	SessionID string   `json:"session_id,omitempty"`
	Records   int      `json:"records,omitempty"`
	Root      string   `json:"root,omitempty"`
	Signer    string   `json:"signer,omitempty"`
	Problems  []string `json:"problems,omitempty"`
}

// verifyUpload checks an uploaded bundle with `cairn audit verify`'s
// verifier, against the given verifier key or this data dir's own.
func (s *Server) verifyUpload(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBundle)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		writeErr(w, errs.Invalidf("bundle", "maxLength", "cannot read the upload: %v", err))
		return
	}
	f, _, err := r.FormFile("bundle")
	if err != nil {
		writeErr(w, errs.Invalid("bundle", "required", "choose a proof bundle file"))
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		writeErr(w, errs.Invalidf("bundle", "type", "cannot read the upload: %v", err))
		return
	}
	vkey := strings.TrimSpace(r.FormValue("key"))
	if vkey == "" {
		// Verifying must never mint a key: without one here, ask for it.
		if _, err := os.Stat(filepath.Join(s.cfg.DataDir, bundle.KeyFile)); errors.Is(err, fs.ErrNotExist) {
			writeErr(w, errs.Invalid("key", "required", "this installation has no signing key yet: paste the exporter's verifier key (`cairn audit pubkey`)"))
			return
		}
		_, vkey, err = bundle.LoadOrCreateKey(bundle.KeyPath(s.cfg.DataDir, s.cfg.KeyFile), s.cfg.KeyName)
		if err != nil {
			writeErr(w, errs.New(500, errs.Internal, err.Error()))
			return
		}
	}
	res := verifyResult{}
	sum, err := bundle.VerifyFile(data, vkey)
	if sum != nil {
		res.SessionID, res.Records, res.Root = sum.SessionID, sum.Records, sum.Root
	}
	if err != nil {
		var ve *bundle.VerifyError
		if errors.As(err, &ve) {
			for _, p := range ve.Problems {
				res.Problems = append(res.Problems, p.String())
			}
		} else {
			res.Problems = []string{err.Error()}
		}
		writeJSON(w, 200, res)
		return
	}
	res.OK, res.Signer = true, strings.SplitN(vkey, "+", 2)[0]
	writeJSON(w, 200, res)
}
