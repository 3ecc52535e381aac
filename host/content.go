package host

import (
	"encoding/base64"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/pipeline"
)

// mcpContent renders a plugin's content block (of a tool result or a
// prompt message) as MCP content; an unknown type becomes text.
func mcpContent(c pipeline.Content) mcp.Content {
	switch c.Type {
	case "image":
		return mcp.NewImageContent(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType)
	case "audio":
		return mcp.NewAudioContent(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType)
	case "resource_link":
		return mcp.NewResourceLink(c.URI, c.Text, "", c.MIMEType)
	case "resource":
		if c.Data != nil {
			return mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: base64.StdEncoding.EncodeToString(c.Data)})
		}
		return mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
	default:
		return mcp.NewTextContent(c.Text)
	}
}
