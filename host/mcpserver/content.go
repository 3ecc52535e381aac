package mcpserver

import (
	"encoding/base64"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// mcpContent renders a plugin's content block (of a tool result or a
// prompt message) as MCP content; an unknown type becomes text.
func mcpContent(c seam.Content) mcp.Content {
	switch c.Type {
	case "image":
		return mcp.NewImageContent(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType)
	case "audio":
		return mcp.NewAudioContent(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType)
	case "resource_link":
		return resourceLink{mcp.NewResourceLink(c.URI, c.Text, "", c.MIMEType)}
	case "resource":
		if c.Data != nil {
			return mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: base64.StdEncoding.EncodeToString(c.Data)})
		}
		return mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
	default:
		return mcp.NewTextContent(c.Text)
	}
}

// resourceLink is an MCP resource_link block written without empty fields
// (docs/decisions.md D31): mcp-go's ResourceLink always writes description
// and mimeType. Embedding keeps it an mcp.Content for every transport.
type resourceLink struct{ mcp.ResourceLink }

func (l resourceLink) MarshalJSON() ([]byte, error) {
	type link struct {
		Type        string           `json:"type"`
		URI         string           `json:"uri"`
		Name        string           `json:"name"`
		Title       string           `json:"title,omitempty"`
		Description string           `json:"description,omitempty"`
		MIMEType    string           `json:"mimeType,omitempty"`
		Size        *int64           `json:"size,omitempty"`
		Meta        *mcp.Meta        `json:"_meta,omitempty"`
		Annotations *mcp.Annotations `json:"annotations,omitempty"`
	}
	return json.Marshal(link{Type: "resource_link", URI: l.URI, Name: l.Name, Title: l.Title, Description: l.Description,
		MIMEType: l.MIMEType, Size: l.Size, Meta: l.Meta, Annotations: l.Annotations})
}
