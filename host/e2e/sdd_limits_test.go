package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Limits and typed errors of the sdd area, against the real binary: bounded
// state values, file rules under the root, exact statuses.

// TestSddDeepValueRefused: the audit's 20 KB value nested 9,990 deep is
// refused with 400 naming value and the limit; the state file keeps every
// byte and the server keeps answering.
func TestSddDeepValueRefused(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "keep", "value": map[string]any{"a": 1}})
	statePath := filepath.Join(w.dataDir(), "state", "sdd-state.json")
	before, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	deep := json.RawMessage(strings.Repeat("[", 9990) + "1" + strings.Repeat("]", 9990))
	e, st := c.fail("sdd_state", map[string]any{"action": "set", "keyPath": "deep", "value": deep})
	d, _ := e["details"].(map[string]any)
	// The host refuses it before the plugin sees it, naming the path
	// inside value at which the limit is crossed.
	field, _ := d["field"].(string)
	if st != 400 || e["code"] != "ERR_INVALID_INPUT" || !strings.HasPrefix(field, "value") || d["constraint"] != "max_depth" || d["limit"] != float64(64) {
		t.Fatalf("got %v %v", st, e)
	}
	after, err := os.ReadFile(statePath)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the state file changed (%d -> %d bytes): %v", len(before), len(after), err)
	}
	if bytes.Contains(after, []byte("\n  ")) {
		t.Error("the state file is written indented")
	}
	l := c.ok("sdd_state", map[string]any{"action": "list"})
	if v, _ := l["value"].(map[string]any); v["keep"] == nil || v["deep"] != nil {
		t.Fatalf("list = %v", l)
	}
}

// TestSddCompleteUnknownSpawnID: completing a spawn id that does not exist
// is 404 ERR_NOT_FOUND whatever its form (it was once 400).
func TestSddCompleteUnknownSpawnID(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	for _, id := range []string{"S-999", "sp_nope", "S-0"} {
		c.wantErr("sdd_agent", map[string]any{"action": "complete", "spawnId": id, "completionStatus": "completed"}, 404, "ERR_NOT_FOUND", "spawnId", "exists")
	}
}

// readErr reads a resource and returns the error text ("" on success).
func readErr(t *testing.T, s *session, uri string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	r, err := s.c.ReadResource(ctx, req)
	if err == nil {
		for _, c := range r.Contents {
			if tc, ok := c.(mcp.TextResourceContents); ok && strings.Contains(tc.Text, "secret") {
				t.Errorf("%s served content from outside the root", uri)
			}
		}
		return ""
	}
	return err.Error()
}

// TestSddResourceIDErrors: an invalid sdd:// id reaches the plugin and is
// refused as invalid input (the host answers invalid params); a well-formed
// unknown id is not found.
func TestSddResourceIDErrors(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	for _, uri := range []string{"sdd://commands/.hidden", "sdd://agents/-x", "sdd://skills/a..b", "sdd://spawn-rules/" + strings.Repeat("a", 65)} {
		if got := readErr(t, c.s, uri); !strings.Contains(got, "ERR_INVALID_INPUT") {
			t.Errorf("%s: want ERR_INVALID_INPUT, got %q", uri, got)
		}
	}
	for _, uri := range []string{"sdd://commands/no-such-command", "sdd://skills/no-such-skill"} {
		if got := readErr(t, c.s, uri); !strings.Contains(got, "ERR_RESOURCE_NOT_FOUND") {
			t.Errorf("%s: want not found, got %q", uri, got)
		}
	}
}

// TestSddWorkspaceFileEscapes: a hard link to a file outside the root and
// a FIFO among the command files are refused, without blocking the server;
// rollback through a .planning symlink cannot remove a file outside.
func TestSddWorkspaceFileEscapes(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("## Objective\nsecret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := filepath.Join(w.root, ".agents", "commands")
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(cmds, "linked.md")); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := syscall.Mkfifo(filepath.Join(cmds, "fifo"+string(rune('a'+i))+".md"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := newSddClient(t, w)
	if got := readErr(t, c.s, "sdd://commands/linked"); !strings.Contains(got, "ERR_INVALID_INPUT") {
		t.Errorf("hard link: %q", got)
	}
	c.wantErr("sdd_vitals", map[string]any{"command": "linked"}, 400, "ERR_INVALID_INPUT", "command", "singleLink")
	for i := range 5 {
		uri := "sdd://commands/fifo" + string(rune('a'+i))
		if got := readErr(t, c.s, uri); !strings.Contains(got, "ERR_INVALID_INPUT") {
			t.Errorf("%s: %q", uri, got)
		}
	}
	c.wantErr("sdd_vitals", map[string]any{"command": "fifoa"}, 400, "ERR_INVALID_INPUT", "command", "regularFile")
	// The server still answers.
	c.ok("sdd_dash", map[string]any{})

	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "currentPhase", "value": 9})
	if ap := c.ok("sdd_evolve", map[string]any{"action": "apply", "candidateId": "missing-plan-9"}); ap["apply"].(map[string]any)["success"] != true {
		t.Fatalf("apply = %v", ap)
	}
	victim := filepath.Join(outside, "PLAN-phase-9.md")
	if err := os.WriteFile(victim, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(w.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.root, ".planning")); err != nil {
		t.Fatal(err)
	}
	c.wantErr("sdd_evolve", map[string]any{"action": "rollback", "candidateId": "missing-plan-9"}, 400, "ERR_INVALID_INPUT", "candidateId", "path")
	if b, err := os.ReadFile(victim); err != nil || string(b) != "not yours" {
		t.Fatalf("the file outside the root was touched: %q %v", b, err)
	}
}
