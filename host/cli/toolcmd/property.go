package toolcmd

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// property is the part of a property's JSON Schema a flag is made from.
type property struct {
	Type        any                  `json:"type"`
	Description string               `json:"description"`
	Enum        []any                `json:"enum"`
	Default     any                  `json:"default"`
	Items       *property            `json:"items"`
	Properties  map[string]*property `json:"properties"`
	Required    []string             `json:"required"`
}

// kind is how a flag reads its value.
type kind int

const (
	kindString kind = iota
	kindInteger
	kindNumber
	kindBoolean
	kindArray
	// kindJSON is any other value, given as JSON text: an object, a value
	// of several types, one the schema does not type.
	kindJSON
)

// kindOf types a property's flag from its schema.
func kindOf(p *property) kind {
	t, ok := p.Type.(string)
	if !ok {
		return kindJSON
	}
	switch t {
	case "string":
		return kindString
	case "integer":
		return kindInteger
	case "number":
		return kindNumber
	case "boolean":
		return kindBoolean
	case "array":
		if p.Items != nil && kindOf(p.Items) <= kindBoolean {
			return kindArray
		}
	}
	return kindJSON
}

// parseSchema reads an input schema's top level.
func parseSchema(raw json.RawMessage) (*property, error) {
	var p property
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &p, nil
}

// names lists an object schema's properties in name order.
func (p *property) names() []string {
	out := make([]string, 0, len(p.Properties))
	for n := range p.Properties {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (p *property) requires(name string) bool {
	for _, r := range p.Required {
		if r == name {
			return true
		}
	}
	return false
}

// Kebab spells a property name as a flag: snake_case and camelCase become
// kebab-case (grace_period_ms → grace-period-ms, maxRetries → max-retries).
func Kebab(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_':
			b.WriteByte('-')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// help is a flag's help text: the description, the values an enum allows,
// whether it is required.
func help(path string, p *property, required bool) string {
	text := p.Description
	if text == "" {
		text = path
	}
	if len(p.Enum) > 0 {
		text += " (one of: " + enumText(p.Enum) + ")"
	}
	switch kindOf(p) {
	case kindArray:
		if len(p.Items.Enum) > 0 {
			text += " (each one of: " + enumText(p.Items.Enum) + ")"
		}
		text += " (repeatable)"
	case kindJSON:
		text += " (JSON)"
	}
	if required {
		text += " (required)"
	}
	return text
}

// enumText lists the values an enum allows.
func enumText(enum []any) string {
	vals := make([]string, len(enum))
	for i, v := range enum {
		vals[i] = fmt.Sprint(v)
	}
	return strings.Join(vals, ", ")
}
