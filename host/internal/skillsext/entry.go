// Package skillsext is the MCP skills extension (SEP-2640,
// io.modelcontextprotocol/skills; the specification is
// https://github.com/modelcontextprotocol/ext-skills, specification/stable/skills.mdx):
// the entry skills/list and skills/get return for a skill, built from the
// bytes of its SKILL.md exactly as resources/read serves them, so that the
// digest, the size and the frontmatter a client verifies are those of what
// it reads (docs/decisions.md D14).
//
// It knows nothing of plugins or sessions: the host finds the SKILL.md
// resources and reads them; this package turns one into an entry.
package skillsext

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The extension's identifier and methods.
const (
	ExtensionKey = "io.modelcontextprotocol/skills"
	MethodList   = "skills/list"
	MethodGet    = "skills/get"
	// Scheme is the URI scheme cairn serves skills under.
	Scheme = "skill://"
	// FileSuffix ends every skill URI: the SKILL.md at the skill's root.
	FileSuffix = "/SKILL.md"
)

// The Agent Skills rules an entry must meet to be served at all.
const (
	maxNameLength        = 64
	maxDescriptionLength = 1024
)

var namePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// Resource is one file of a skill with the digest and size of its bytes.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// Skill is the entry for one skill: its SKILL.md's URI, that file's
// frontmatter as a JSON object, and the complete list of its files.
type Skill struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []Resource      `json:"resources"`
}

// IsSkillURI reports whether uri names a skill's SKILL.md under Scheme:
// skill://<path>/SKILL.md with a non-empty path.
func IsSkillURI(uri string) bool {
	p, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return false
	}
	p, ok = strings.CutSuffix(p, FileSuffix)
	return ok && p != "" && !strings.HasSuffix(p, "/")
}

// Entry builds the entry of the skill whose SKILL.md at uri holds data. A
// cairn skill is a single file, so the manifest is that file alone. The
// frontmatter must be a YAML mapping whose name is the URI's last path
// segment and follows the Agent Skills naming rules, with a description: an
// *errs.Error naming the field says which rule a file breaks.
func Entry(uri string, data []byte) (Skill, error) {
	if !IsSkillURI(uri) {
		return Skill{}, errs.Invalidf("uri", "skill URI", "%q is not a skill URI: it must be %s<path>%s", uri, Scheme, FileSuffix)
	}
	block, ok := frontmatterBlock(string(data))
	if !ok {
		return Skill{}, errs.Invalidf("frontmatter", "present", "%s has no frontmatter: it must open with a \"---\" line and close with another", uri)
	}
	fields, err := decodeMapping(block)
	if err != nil {
		return Skill{}, errs.Invalidf("frontmatter", "YAML mapping", "%s: frontmatter: %v", uri, err)
	}
	segment := strings.TrimSuffix(strings.TrimPrefix(uri, Scheme), FileSuffix)
	segment = segment[strings.LastIndex(segment, "/")+1:]
	name, _ := fields["name"].(string)
	switch {
	case name == "":
		return Skill{}, errs.Invalidf("name", "required", "%s: frontmatter has no name; the skills extension needs one equal to %q", uri, segment)
	case name != segment:
		return Skill{}, errs.Invalidf("name", "equals path", "%s: frontmatter name %q is not the skill's path segment %q", uri, name, segment)
	case utf8.RuneCountInString(name) > maxNameLength || !namePattern.MatchString(name):
		return Skill{}, errs.Invalidf("name", "Agent Skills name", "%s: name %q must be 1-%d lowercase letters, digits and single hyphens", uri, name, maxNameLength)
	}
	description, _ := fields["description"].(string)
	switch {
	case strings.TrimSpace(description) == "":
		return Skill{}, errs.Invalidf("description", "required", "%s: frontmatter has no description", uri)
	case utf8.RuneCountInString(description) > maxDescriptionLength:
		return Skill{}, errs.Invalidf("description", fmt.Sprintf("maxLength %d", maxDescriptionLength), "%s: description is longer than %d characters", uri, maxDescriptionLength)
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return Skill{}, errs.Invalidf("frontmatter", "JSON", "%s: frontmatter has no JSON form: %v", uri, err)
	}
	sum := sha256.Sum256(data)
	return Skill{
		URI:         uri,
		Frontmatter: raw,
		Resources:   []Resource{{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(data)}},
	}, nil
}

// frontmatterBlock is the YAML between a first line "---" and the next line
// "---" (trailing blanks and a CR allowed on both), as clients split a
// SKILL.md to compare its frontmatter with the entry's.
func frontmatterBlock(text string) (string, bool) {
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !isFence(first) {
		return "", false
	}
	var b strings.Builder
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if isFence(line) {
			return b.String(), true
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return "", false
}

func isFence(line string) bool {
	return strings.TrimRight(line, " \t\r") == "---"
}

// decodeMapping decodes YAML that must be a mapping, as clients parse it
// (YAML 1.2's core schema): keys are strings and a date stays the text it
// is. A panic inside the decoder is an error: the files are user-edited.
func decodeMapping(block string) (fields map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML decoder failed: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("it is not a mapping of fields")
	}
	v, err := plain(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// maxDepth bounds how deeply plain follows nested values and aliases.
const maxDepth = 64

// plain is the JSON value of a YAML node.
func plain(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("it nests deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return plain(n.Alias, depth+1)
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a plain value", k.Line)
			}
			v, err := plain(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := plain(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool", "!!null":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, err
			}
			return v, nil
		}
		return n.Value, nil // strings, and dates kept as written
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
