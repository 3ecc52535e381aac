package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Each skill is a resource skill://<name>/SKILL.md whose text is the file
// byte for byte, listed while the file is there (docs/decisions.md D14).
func TestSkillResourcesFollowTheRegistry(t *testing.T) {
	t.Setenv("CAIRN_LOG_LEVEL", "error")
	t.Setenv("CAIRN_PROJECT", "")
	root, data := t.TempDir(), t.TempDir()
	file := filepath.Join(root, ".agents", "skills", "cairn-demo", "SKILL.md")
	source := "---\nname: cairn-demo\nversion: \"1.0.0\"\ndescription: A demo.\n---\n\n# Demo\r\n"
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: root, DataDir: data}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	ctx := context.Background()

	listed := func() []sdk.Resource {
		res, tpl, err := sdktest.ListResources(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range tpl {
			found = found || x.URITemplate == "skill://{name}/SKILL.md"
		}
		if !found {
			t.Errorf("no skill:// template among %+v", tpl)
		}
		var out []sdk.Resource
		for _, r := range res {
			if r.MIMEType == skillMIMEType {
				out = append(out, r)
			}
		}
		return out
	}
	if got := listed(); len(got) != 1 || got[0].URI != "skill://cairn-demo/SKILL.md" || got[0].Name != "cairn-demo" || got[0].Description != "A demo." {
		t.Fatalf("skill resources %+v", got)
	}
	contents, err := sdktest.ReadResource(ctx, p, "skill://cairn-demo/SKILL.md")
	if err != nil || len(contents) != 1 || contents[0].Text != source || contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read: %+v %v", contents, err)
	}
	for _, uri := range []string{"skill://cairn-missing/SKILL.md", "skill://cairn-demo/other.md", "skill:///SKILL.md", "skill://a/cairn-demo/SKILL.md"} {
		_, err := sdktest.ReadResource(ctx, p, uri)
		if e, ok := errs.As(err); !ok || e.Status != 404 || e.Details["field"] != "uri" {
			t.Errorf("read %s: %v; want a 404 naming uri", uri, err)
		}
	}

	if err := os.RemoveAll(filepath.Dir(file)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "a removed skill to leave the list", func() bool { return len(listed()) == 0 })
	if _, err := sdktest.ReadResource(ctx, p, "skill://cairn-demo/SKILL.md"); err == nil {
		t.Error("a removed skill still reads")
	}
}
