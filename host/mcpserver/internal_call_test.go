package mcpserver

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// CallInternal reaches only the internal toolset: it is no way around a
// session's toolsets or mode.
func TestCallInternalRefusesOtherTools(t *testing.T) {
	reg := registry.New()
	h := &Server{catalog: catalog.New(reg, nil)}
	if err := reg.Set("core", []*registry.Tool{{Name: "task_create", Owner: "core", Toolset: "core"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"task_create", "no_such_tool"} {
		o := h.CallInternal(context.Background(), name, []byte(`{}`), seam.Caller{ID: "alice", Source: "person"})
		if o.Err == nil || o.Err.Status != 404 || o.Err.Details["field"] != "name" {
			t.Errorf("%s: %+v, want 404 naming the field name", name, o.Err)
		}
	}
}
