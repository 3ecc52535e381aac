package core

import (
	"context"
	"strings"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// SkillURIPrefix is the scheme under which the core area serves each skill
// of the registry as a resource, skill://<name>/SKILL.md, its bytes as they
// are on disk. The host's skills extension lists and verifies skills from
// these resources (docs/decisions.md D14).
const SkillURIPrefix = "skill://"

// skillMIMEType is what the skills extension asks of a SKILL.md resource.
const skillMIMEType = "text/markdown"

// registerSkillResources lists one resource per skill, live from the
// registry, and routes reads of skill:// to it. The template lets a client
// read a skill it learned of before it listed resources again.
func (c *Area) registerSkillResources() {
	c.p.AddResources(sdk.ResourceSet{
		Prefix: SkillURIPrefix, Read: c.readSkillFile, List: c.skillResources,
		Templates: []sdk.ResourceTemplate{{
			URITemplate: SkillURIPrefix + "{name}/" + skills.FileName, Name: "skill", MIMEType: skillMIMEType,
			Description: "A cairn skill's SKILL.md as it is on disk; skill_list, prompts/list and skills/list name them.",
		}},
	})
}

// skillURI is where a skill's SKILL.md is served.
func skillURI(name string) string { return SkillURIPrefix + name + "/" + skills.FileName }

func (c *Area) skillResources(context.Context) ([]sdk.Resource, error) {
	list, err := c.skillSnapshot()
	if err != nil || len(list) == 0 {
		return nil, err
	}
	out := make([]sdk.Resource, 0, len(list))
	for _, s := range list {
		out = append(out, sdk.Resource{URI: skillURI(s.Name), Name: s.Name, Description: s.Description, MIMEType: skillMIMEType})
	}
	return out, nil
}

// readSkillFile serves skill://<name>/SKILL.md from the registry's last scan.
func (c *Area) readSkillFile(_ context.Context, uri string) ([]sdk.ResourceContents, error) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(uri, SkillURIPrefix), "/"+skills.FileName)
	if !ok || name == "" || strings.Contains(name, "/") {
		return nil, errs.NotFoundf(errs.ResourceNotFound, "uri", "no resource %q: skills are served at %s<name>/%s", uri, SkillURIPrefix, skills.FileName)
	}
	list, err := c.skillSnapshot()
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name == name {
			return []sdk.ResourceContents{{URI: uri, MIMEType: skillMIMEType, Text: s.Source}}, nil
		}
	}
	return nil, errs.NotFoundf(errs.ResourceNotFound, "uri", "no skill named %q: skill_list names the skills there are", name)
}

// skillSnapshot is the registry's skills, none before it is open.
func (c *Area) skillSnapshot() ([]skills.Skill, error) {
	c.mu.RLock()
	reg := c.skills
	c.mu.RUnlock()
	if reg == nil {
		return nil, nil
	}
	return reg.List("", "")
}
