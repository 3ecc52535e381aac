package sdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// readNote serves notes://<id>.
func readNote(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
	id := strings.TrimPrefix(uri, "notes://")
	if id != "N-1" {
		return nil, sdk.NotFound("ERR_RESOURCE_NOT_FOUND", "uri", "no note "+id)
	}
	return []sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: "# Buy milk"}}, nil
}

// AddResources declares a family of resources: what is listed, the
// templates, and the reader of the URIs under a prefix.
func ExamplePlugin_AddResources() {
	p := sdk.New("notes", "1.0.0")
	p.AddResources(sdk.ResourceSet{
		Prefix:    "notes://",
		Read:      readNote,
		Fixed:     []sdk.Resource{{URI: "notes://N-1", Name: "N-1", MIMEType: "text/markdown"}},
		Templates: []sdk.ResourceTemplate{{URITemplate: "notes://{id}", Name: "note", MIMEType: "text/markdown"}},
	})
	ctx := context.Background()
	res, tpl, _ := sdktest.ListResources(ctx, p)
	fmt.Println(res[0].URI, tpl[0].URITemplate)
	contents, _ := sdktest.ReadResource(ctx, p, "notes://N-1")
	fmt.Println(contents[0].Text)
	_, err := sdktest.ReadResource(ctx, p, "notes://N-9")
	fmt.Println(err.(*sdk.Error).Status)
	// Output:
	// notes://N-1 notes://{id}
	// # Buy milk
	// 404
}

// List serves resources that change while the plugin runs: the host asks
// at each resources/list.
func ExampleResourceSet() {
	p := sdk.New("notes", "1.0.0")
	notes := []string{"N-1", "N-2"}
	p.AddResources(sdk.ResourceSet{
		Prefix: "notes://", Read: readNote,
		List: func(context.Context) ([]sdk.Resource, error) {
			var out []sdk.Resource
			for _, id := range notes {
				out = append(out, sdk.Resource{URI: "notes://" + id, Name: id})
			}
			return out, nil
		},
	})
	res, _, _ := sdktest.ListResources(context.Background(), p)
	fmt.Println(len(res), res[1].URI)
	// Output: 2 notes://N-2
}

func ExampleResource() {
	r := sdk.Resource{URI: "notes://readme", Name: "readme", Description: "How notes work", MIMEType: "text/markdown"}
	fmt.Println(r.URI, r.MIMEType)
	// Output: notes://readme text/markdown
}

// A template lets a client read resources it never listed (RFC 6570).
func ExampleResourceTemplate() {
	t := sdk.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", Description: "A note by id"}
	fmt.Println(t.URITemplate)
	// Output: notes://{id}
}

// A resource's contents are text, or a blob for binary data.
func ExampleResourceContents() {
	c := sdk.ResourceContents{URI: "notes://N-1/photo", MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}
	fmt.Println(c.MIMEType, len(c.Blob), c.Text == "")
	// Output: image/png 4 true
}

// ResourceUpdated tells the host a resource changed, so sessions
// subscribed to it hear; in process, without a host, it says so.
func ExamplePlugin_ResourceUpdated() {
	p := sdk.New("notes", "1.0.0")
	fmt.Println(p.ResourceUpdated(context.Background(), "notes://N-1"))
	// Output: sdk: publish resource.updated: plugin is not connected to a host
}
