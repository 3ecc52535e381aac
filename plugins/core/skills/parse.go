package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds how much of a SKILL.md file is read. Skills are short
// instructions; a larger file is almost certainly a mistake, and the bound
// keeps a stray file from costing the host memory on every rescan.
const MaxFileSize = 1 << 20

// Meta is the part of a SKILL.md frontmatter the registry uses.
type Meta struct {
	// Name is the optional name key. The directory name is authoritative;
	// Name is kept only so callers can warn about a mismatch.
	Name         string
	Version      string
	Description  string
	Capabilities []string
	// Arguments are what the skill takes when a client uses it as an MCP
	// prompt (optional "arguments" key).
	Arguments []Argument
}

// Argument is one argument of a skill used as a prompt.
type Argument struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
}

// argumentName is the form of an argument name: it becomes a prompt
// argument a client fills in.
// Compiled on first use, not in package init, which every cairn process runs.
var argumentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// frontmatter mirrors the YAML keys. Unknown keys are allowed because
// SKILL.md files in the wild carry extra keys (license, allowed-tools, ...).
type frontmatter struct {
	Name         string     `yaml:"name"`
	Version      string     `yaml:"version"`
	Description  string     `yaml:"description"`
	Capabilities []string   `yaml:"capabilities"`
	Arguments    []Argument `yaml:"arguments"`
}

// Parse reads the YAML frontmatter of a SKILL.md file: the text between a
// leading "---" line and the next "---" line. It returns an error, never
// panics, for a file without frontmatter, YAML that is not a mapping, keys
// of the wrong type, a missing version or description, or an empty
// capability.
func Parse(data []byte) (Meta, error) {
	if len(data) > MaxFileSize {
		return Meta{}, fmt.Errorf("file is larger than %d bytes", MaxFileSize)
	}
	if !utf8.Valid(data) {
		return Meta{}, errors.New("file is not valid UTF-8")
	}
	block, err := frontmatterBlock(data)
	if err != nil {
		return Meta{}, err
	}
	var fm frontmatter
	if err := safeUnmarshal(block, &fm); err != nil {
		return Meta{}, fmt.Errorf("frontmatter: %v", err)
	}
	m := Meta{
		Name:         strings.TrimSpace(fm.Name),
		Version:      strings.TrimSpace(fm.Version),
		Description:  strings.TrimSpace(fm.Description),
		Capabilities: make([]string, 0, len(fm.Capabilities)),
	}
	if m.Version == "" {
		return Meta{}, errors.New("frontmatter: version is missing or empty")
	}
	if m.Description == "" {
		return Meta{}, errors.New("frontmatter: description is missing or empty")
	}
	for i, c := range fm.Capabilities {
		c = strings.TrimSpace(c)
		if c == "" {
			return Meta{}, fmt.Errorf("frontmatter: capabilities[%d] is empty", i)
		}
		m.Capabilities = append(m.Capabilities, c)
	}
	seen := map[string]bool{}
	for i, a := range fm.Arguments {
		a.Name, a.Description = strings.TrimSpace(a.Name), strings.TrimSpace(a.Description)
		if !argumentName().MatchString(a.Name) {
			return Meta{}, fmt.Errorf("frontmatter: arguments[%d].name %q must match %s", i, a.Name, argumentName())
		}
		if seen[a.Name] {
			return Meta{}, fmt.Errorf("frontmatter: arguments[%d].name %q is repeated", i, a.Name)
		}
		seen[a.Name] = true
		m.Arguments = append(m.Arguments, a)
	}
	return m, nil
}

// Body returns the instructions of a SKILL.md file: what follows its
// frontmatter's closing "---" line, trimmed. A file without frontmatter has
// no body.
func Body(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := cutLine(data)
	if string(first) != "---" {
		return ""
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = cutLine(rest)
		if string(line) == "---" {
			return strings.TrimSpace(string(rest))
		}
	}
	return ""
}

// frontmatterBlock returns the YAML between the opening and closing "---"
// lines. A UTF-8 byte order mark and CRLF line endings are tolerated because
// editors on some platforms add them.
func frontmatterBlock(data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("no frontmatter: file is empty")
	}
	first, rest, _ := cutLine(data)
	if string(first) != "---" {
		return nil, errors.New(`no frontmatter: file must start with a "---" line`)
	}
	start := len(data) - len(rest)
	pos := start
	for pos < len(data) {
		line, next, _ := cutLine(data[pos:])
		if string(line) == "---" {
			return data[start:pos], nil
		}
		pos = len(data) - len(next)
	}
	return nil, errors.New(`no frontmatter: closing "---" line not found`)
}

// cutLine splits off the first line, without its line ending. ok reports
// whether a line ending was found.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	line, rest, ok = bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, rest, ok
}

// safeUnmarshal turns a panic inside the YAML decoder into an error: the
// files are user-edited, and one bad file must never take the host down.
func safeUnmarshal(in []byte, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML decoder failed: %v", r)
		}
	}()
	return yaml.Unmarshal(in, out)
}
