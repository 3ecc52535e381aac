package seam

import "github.com/cairn-mcp/cairn/sdk/errs"

// Resource is one of a plugin's MCP resources.
type Resource struct {
	URI, Name, Description, MIMEType string
}

// ResourceTemplate is one of a plugin's MCP resource templates.
type ResourceTemplate struct {
	URITemplate, Name, Description, MIMEType string
}

// Resources is a plugin's resource listing.
type Resources struct {
	Resources []Resource
	Templates []ResourceTemplate
}

// ResourceContents is one part of a read resource: Text, or Blob for a
// binary one (Blob non-nil).
type ResourceContents struct {
	URI, MIMEType, Text string
	Blob                []byte
}

// ReadResult is a read resource, or Err when the plugin could not read it.
type ReadResult struct {
	Contents []ResourceContents
	Err      *errs.Error
}
