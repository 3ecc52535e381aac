package main

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/toolsnap"
)

func TestToolSnapshots(t *testing.T) {
	toolsnap.Check(t, newPlugin(), "testdata/toolsnaps")
}
