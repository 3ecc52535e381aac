package config

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TestAuditTSAURL: the timestamp authority is optional; when set it is an
// http(s) URL, and a bad one is an error naming the setting
// (docs/decisions.md D38).
func TestAuditTSAURL(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, raw := range []string{"", "http://127.0.0.1:3180/api/v1/timestamp", "https://tsa.example.internal"} {
		s, err := Resolve(lookup(map[string]string{"CAIRN_ROOT": root, "CAIRN_AUDIT_TSA_URL": raw}), root, "")
		if err != nil || s.AuditTSAURL != raw {
			t.Fatalf("%q: %q, %v", raw, s.AuditTSAURL, err)
		}
	}
	_, err := Resolve(lookup(map[string]string{"CAIRN_ROOT": root, "CAIRN_AUDIT_TSA_URL": "tsa"}), root, "")
	if e, ok := errs.As(err); !ok || e.Details["field"] != "CAIRN_AUDIT_TSA_URL" {
		t.Fatalf("err %v", err)
	}
}
