package sdk

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// A plugin stopped before the host connects to its lane (a host run with
// CAIRN_CALL_LANE=off, or one that gave up) removes the lane's socket and
// folder at once, rather than leaving them when it exits.
func TestStopRemovesALaneNoHostConnectedTo(t *testing.T) {
	t.Setenv("PLUGIN_UNIX_SOCKET_DIR", t.TempDir())
	s := &server{p: countPlugin()}
	path, err := s.openLane()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the lane's socket is not there: %v", err)
	}
	if _, err := s.Stop(context.Background(), &pb.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the lane's folder %s is still there after Stop (%v)", dir, err)
	}
	s.closeWaitingLane() // a second time is harmless
}
