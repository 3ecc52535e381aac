package seam

// CompleteRequest asks a plugin to complete an argument of one of its
// prompts or resource templates (MCP completion/complete).
type CompleteRequest struct {
	// RefType is "prompt" or "resource"; RefName the prompt's name or the
	// template's URI.
	RefType, RefName string
	// Argument is the argument being completed and Value what the user
	// has typed so far.
	Argument, Value string
	// Context holds the values of arguments already filled in.
	Context map[string]string
}

// Completion is a plugin's answer to a CompleteRequest.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}
