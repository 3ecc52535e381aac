package sdd

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
)

// resourceTemplates are the four sdd:// families. They let a client read
// an id that did not exist when the host listed the resources (a skill
// registered or a rule set since).
var resourceTemplates = []sdk.ResourceTemplate{
	{URITemplate: ResourcePrefix + "commands/{id}", Name: "sdd-command", MIMEType: "text/markdown",
		Description: "An SDD command file: .agents/commands/<id>.md, else the bundled default."},
	{URITemplate: ResourcePrefix + "agents/{id}", Name: "sdd-agent", MIMEType: "text/markdown",
		Description: "An SDD agent file: .agents/agents/<id>.md, else the bundled default."},
	{URITemplate: ResourcePrefix + "skills/{id}", Name: "sdd-skill", MIMEType: "application/json",
		Description: "A skill of the SDD skill registry (sdd_skill register)."},
	{URITemplate: ResourcePrefix + "spawn-rules/{id}", Name: "sdd-spawn-rule", MIMEType: "application/json",
		Description: "The spawn rule of an intent (plan_phase, execute_phase, debug_issue, or one set with sdd_agent set_rule)."},
}

func (s *Area) registerResources() {
	s.p.AddResources(sdk.ResourceSet{Prefix: ResourcePrefix, Read: s.readResource, List: s.listResources, Templates: resourceTemplates})
}

func (s *Area) listResources(context.Context) ([]sdk.Resource, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, err
	}
	entries, err := eng.ListResources()
	if err != nil {
		return nil, err
	}
	out := make([]sdk.Resource, 0, len(entries))
	for _, r := range entries {
		out = append(out, sdk.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MimeType})
	}
	return out, nil
}

// readResource serves sdd://<category>/<id>; the engine refuses unsafe or
// encoded ids (400) and caps the content at RESOURCE_CONTENT_LIMIT
// characters.
func (s *Area) readResource(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, err
	}
	rc, err := eng.ReadResource(uri)
	if err != nil {
		return nil, err
	}
	return []sdk.ResourceContents{{URI: uri, MIMEType: rc.MimeType, Text: rc.Content}}, nil
}

// ResourceContentLimit is RESOURCE_CONTENT_LIMIT (docs/decisions.md D17).
const ResourceContentLimit = engine.ResourceContentLimit
