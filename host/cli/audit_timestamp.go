package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// checkTimestamps checks a verified Sigstore bundle's RFC 3161 timestamps
// against the chain in tsaCertFile, and returns the lines to print: each
// stamped time, or that timestamps are present but unchecked when no chain
// was given (docs/decisions.md D38). A cairn bundle has none.
func checkTimestamps(data []byte, tsaCertFile string) ([]string, error) {
	if !bundle.IsSigstore(data) {
		if tsaCertFile != "" {
			return nil, errs.Invalidf("--tsa-cert", "applies", "--tsa-cert checks a Sigstore bundle's timestamps; this is a cairn bundle, which holds none")
		}
		return nil, nil
	}
	s, err := bundle.ParseSigstore(data)
	if err != nil {
		return nil, err
	}
	n := len(s.Timestamps())
	if tsaCertFile == "" {
		if n == 0 {
			return nil, nil
		}
		return []string{fmt.Sprintf("timestamps: %d RFC 3161 timestamp(s) present but unchecked: pass --tsa-cert with the timestamp authority's PEM chain", n)}, nil
	}
	if n == 0 {
		return nil, errs.Invalidf("--tsa-cert", "timestamps", "the bundle holds no RFC 3161 timestamp to check (exported without CAIRN_AUDIT_TSA_URL, or with --no-timestamp)")
	}
	pemData, err := os.ReadFile(tsaCertFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errs.NotFoundf(errs.NotFound, "--tsa-cert", "no certificate file at %s", tsaCertFile)
		}
		return nil, errs.Invalidf("--tsa-cert", "readable", "cannot read %s: %v", tsaCertFile, err)
	}
	chain, err := bundle.ParseTSAChain(pemData, "--tsa-cert")
	if err != nil {
		return nil, err
	}
	times, err := bundle.VerifyTimestamps(s, chain)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(times))
	for _, t := range times {
		lines = append(lines, fmt.Sprintf("timestamp: %s, RFC 3161, verified with %s", t.UTC().Format(time.RFC3339Nano), tsaCertFile))
	}
	return lines, nil
}
