package catalog_test

import (
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/registry"
)

// While plugins still start after the first answer, a tool not registered
// yet is looked up once they are up, not refused as unknown
// (docs/decisions.md D46); once they are, an unknown name is unknown.
func TestGetWaitsForPluginsStillStarting(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	c := catalog.New(reg, nil)
	if _, ok := c.Get("vision_echo"); ok {
		t.Fatal("an unregistered tool was found before any start")
	}
	started := make(chan struct{})
	// The plugins left for later start when a lookup needs them.
	var once sync.Once
	c.AwaitStart(started, func() {
		once.Do(func() {
			go func() {
				if err := reg.Set("vision", []*registry.Tool{{Name: "vision_echo", Toolset: "vision"}}); err != nil {
					t.Error(err)
				}
				close(started)
			}()
		})
	})
	if tool, ok := c.Get("vision_echo"); !ok || tool.Owner != "vision" {
		t.Fatalf("Get during the start = %v, %v; want the tool its plugin registers", tool, ok)
	}
	if _, ok := c.Get("no_such_tool"); ok {
		t.Fatal("an unknown tool was found once every plugin had started")
	}
}
