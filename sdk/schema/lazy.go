package schema

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// skipped stands in for a string, array or object whose schema looks at
// nothing but its type: it is skipped, not decoded. Decoding into any costs
// tens of bytes a token, so a large value a schema admits whatever it holds
// (sdd_state's value, say) would cost many times its size to validate
// (docs/decisions.md D33).
type skipped jsonType

// markShallow records, for every node, whether a value's type is all it
// checks of a string, array or object (numbers are always decoded). The
// schema has no cycle through $ref and the applicators (checkCycles).
func markShallow(nodes map[string]*node) {
	memo := map[*node]bool{}
	var shallow func(n *node) bool
	shallow = func(n *node) bool {
		if v, ok := memo[n]; ok {
			return v
		}
		v := n.always != nil || (!n.hasConst && !n.hasEnum &&
			n.minProps < 0 && n.maxProps < 0 && len(n.required) == 0 && n.props == nil && n.patternProps == nil && !n.addlSet &&
			n.minItems < 0 && n.maxItems < 0 && !n.uniqueItems && n.prefixItems == nil && n.items == nil &&
			n.minLength < 0 && n.maxLength < 0 && n.pattern == nil &&
			(n.ref == nil || shallow(n.ref)) && (n.not == nil || shallow(n.not)) &&
			allShallow(n.allOf, shallow) && allShallow(n.anyOf, shallow) && allShallow(n.oneOf, shallow))
		memo[n] = v
		return v
	}
	for _, n := range nodes {
		n.shallow = shallow(n)
		// Members and items are decoded one by one, each against its
		// own schema, only where nothing else looks at the whole value.
		n.plain = n.always == nil && n.ref == nil && n.not == nil && n.allOf == nil && n.anyOf == nil && n.oneOf == nil &&
			!n.hasConst && !n.hasEnum && !n.uniqueItems
	}
}

func allShallow(ns []*node, shallow func(*node) bool) bool {
	for _, n := range ns {
		if !shallow(n) {
			return false
		}
	}
	return true
}

// lazy decodes a document for a schema.
type lazy struct{ rawjson.Scanner }

// decodeFor decodes a valid JSON document as far as n looks into it: what
// no rule reads stays undecoded (skipped). Everything decoded is as
// decodeJSON makes it.
func decodeFor(n *node, doc []byte) (any, error) {
	s := &lazy{rawjson.Scanner{B: doc}}
	s.Space()
	return s.value(n)
}

// value decodes the value at s.I for n (nil: no schema applies).
func (s *lazy) value(n *node) (any, error) {
	start := s.I
	c := s.B[s.I]
	switch {
	case c != '"' && c != '{' && c != '[':
		s.Skip()
		switch c {
		case 't':
			return true, nil
		case 'f':
			return false, nil
		case 'n':
			return nil, nil
		}
		return json.Number(s.B[start:s.I]), nil
	case n == nil || n.shallow:
		s.Skip()
		switch c {
		case '"':
			return skipped(stringType), nil
		case '{':
			return skipped(objectType), nil
		}
		return skipped(arrayType), nil
	case c == '"':
		s.SkipString()
		var str string
		err := json.Unmarshal(s.B[start:s.I], &str)
		return str, err
	case !n.plain:
		s.Skip()
		return decodeJSON(s.B[start:s.I])
	case c == '{':
		return s.object(n)
	}
	return s.array(n)
}

func (s *lazy) object(n *node) (any, error) {
	obj := map[string]any{}
	s.I++
	for {
		s.Space()
		switch s.B[s.I] {
		case '}':
			s.I++
			return obj, nil
		case ',':
			s.I++
			continue
		}
		ks := s.I
		s.SkipString()
		var name string
		if err := json.Unmarshal(s.B[ks:s.I], &name); err != nil {
			return nil, err
		}
		s.Space()
		s.I++ // ':'
		s.Space()
		sub, several := memberSchema(n, name)
		var v any
		var err error
		if several {
			vs := s.I
			s.Skip()
			v, err = decodeJSON(s.B[vs:s.I])
		} else {
			v, err = s.value(sub)
		}
		if err != nil {
			return nil, err
		}
		obj[name] = v
	}
}

// memberSchema is the one schema that applies to member name of an object
// n checks (nil: none does); several reports more than one, when the
// member is decoded whole.
func memberSchema(n *node, name string) (sub *node, several bool) {
	count := 0
	if p, ok := n.props[name]; ok {
		sub, count = p, 1
	}
	for _, pp := range n.patternProps {
		if pp.re.MatchString(name) {
			sub = pp.n
			if count++; count > 1 {
				return nil, true
			}
		}
	}
	if count == 0 && n.addl != nil {
		sub = n.addl
	}
	return sub, false
}

func (s *lazy) array(n *node) (any, error) {
	arr := []any{}
	s.I++
	for {
		s.Space()
		switch s.B[s.I] {
		case ']':
			s.I++
			return arr, nil
		case ',':
			s.I++
			continue
		}
		sub := n.items
		if len(arr) < len(n.prefixItems) {
			sub = n.prefixItems[len(arr)]
		}
		v, err := s.value(sub)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
}
