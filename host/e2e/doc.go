// Package e2e holds the host's end-to-end tests: they build the real cairn
// binary and plugins, start `cairn serve`, and talk MCP to it over stdio and
// streamable HTTP with mcp-go's client.
package e2e
