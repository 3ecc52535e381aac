package systemtools

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/schema"
)

// publishedSchema is the outputSchema a host tool publishes for its success
// schema: the success object or the error envelope (docs/decisions.md D37).
func publishedSchema(success json.RawMessage) json.RawMessage {
	out, err := schema.Published(success)
	if err != nil {
		panic(err) // the host's own types: a bug caught at start-up
	}
	return out
}
