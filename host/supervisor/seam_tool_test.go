package supervisor

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// A plugin from outside the binary is refused at registration when a
// schema uses a keyword the validator does not implement, naming the
// keyword; a good schema is compiled there once.
func TestToolFromSeamChecksSchemasAtRegistration(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out string
		want    string
	}{
		{"unsupported input keyword", `{"type":"array","contains":{"type":"string"}}`, ``, `input schema: invalid schema: at #: keyword "contains" is not supported`},
		{"unsupported output keyword", `{"type":"object"}`, `{"type":"object","dependentRequired":{"a":["b"]}}`, `output schema: invalid schema: at #: keyword "dependentRequired" is not supported`},
		{"bad pattern", `{"type":"object","properties":{"id":{"type":"string","pattern":"(?<"}}}`, ``, `input schema: invalid schema: at #/properties/id/pattern: pattern "(?<" is not a valid regular expression`},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, ``, `$schema http://json-schema.org/draft-07/schema# is not supported`},
		{"good", `{"type":"object","properties":{"id":{"type":"string","pattern":"^T-[0-9]+$"}},"additionalProperties":false}`, `{"type":"object"}`, ``},
	} {
		rt, err := toolFromSeam(seam.Tool{Name: "x", InputSchema: []byte(c.in), OutputSchema: []byte(c.out)}, true)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want == "" && rt.Validator == nil:
			t.Errorf("%s: not compiled at registration", c.name)
		case c.want == "" && rt.Validate([]byte(`{"id":"nope"}`)) == nil:
			t.Errorf("%s: the compiled schema admits a bad id", c.name)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
