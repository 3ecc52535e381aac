// Package areas links cairn's built-in areas into a binary: importing it
// runs each area's registration with the built-in registry (package
// builtin). The cairn command imports this package, so the host itself
// names no area package (docs/decisions.md D22: the host talks to areas only
// through the plugin protocol).
package areas

import (
	// Each area registers itself from its init function.
	_ "github.com/cairn-mcp/cairn/plugins/admin"
	_ "github.com/cairn-mcp/cairn/plugins/core"
	_ "github.com/cairn-mcp/cairn/plugins/sdd"
	_ "github.com/cairn-mcp/cairn/plugins/vision"
)
