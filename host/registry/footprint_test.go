package registry

import (
	"encoding/json"
	"testing"
)

// Hints carry only what differs from MCP's defaults, and the write hints
// only on tools that write (docs/decisions.md D37).
func TestHintsSayOnlyWhatIsNotDefault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool *Tool
		want string
	}{
		{&Tool{ReadOnly: true, Idempotent: true}, `{"readOnlyHint":true,"openWorldHint":false}`},
		{&Tool{ReadOnly: true, OpenWorld: true}, `{"readOnlyHint":true}`},
		{&Tool{}, `{"destructiveHint":false,"openWorldHint":false}`},
		{&Tool{Destructive: true, Idempotent: true, OpenWorld: true}, `{"idempotentHint":true}`},
	} {
		got, err := json.Marshal(c.tool.Hints())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("readOnly=%v destructive=%v idempotent=%v openWorld=%v: hints %s, want %s",
				c.tool.ReadOnly, c.tool.Destructive, c.tool.Idempotent, c.tool.OpenWorld, got, c.want)
		}
	}
}

// Footprint counts the tools/list entry without and with its output schema.
func TestFootprint(t *testing.T) {
	t.Parallel()
	tool := &Tool{Name: "task_get", Title: "Get task", Description: "Read <one> task.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","anyOf":[{"type":"object"}]}`)}
	model := `{"name":"task_get","title":"Get task","description":"Read \u003cone\u003e task.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	f := tool.Footprint()
	if f.Model != len(model) {
		t.Errorf("model bytes %d, want %d (%s)", f.Model, len(model), model)
	}
	if want := len(model) + len(`,"outputSchema":`) + len(tool.OutputSchema); f.Wire != want {
		t.Errorf("wire bytes %d, want %d", f.Wire, want)
	}
}
