package main

import (
	"os/exec"
	"strings"
	"testing"
)

// cairn-areas exists to start faster than cairn, so it links none of what
// only the host needs: the MCP server (and the JSON Schema compiler whose
// package initialisation alone takes about 3 ms), the dashboard's Markdown
// renderer, or any host package.
func TestAreasBinaryLinksNoHostPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	banned := []string{
		"github.com/cairn-mcp/cairn/host/",
		"github.com/mark3labs/mcp-go/server",
		"github.com/santhosh-tekuri/jsonschema",
		"github.com/yuin/goldmark",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.HasPrefix(pkg, b) {
				t.Errorf("cairn-areas links %s", pkg)
			}
		}
	}
}
