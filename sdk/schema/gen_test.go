package schema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"strings"
)

// gen draws random schemas using the keywords Compile supports, and
// documents near a schema (mostly shaped by it, with random mutations), for
// the differential tests.
type gen struct {
	r *rand.Rand
	// defs are the names of the root's $defs a $ref may point at.
	defs []string
}

func newGen(seed1, seed2 uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed1, seed2))}
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

var (
	genNames    = []string{"a", "b", "name", "3", "x y", "ids", "é"}
	genPatterns = []string{"^[a-z]+$", "^T-[1-9][0-9]*$", "a", "^.{2,4}$", "é", "^[a-z0-9][a-z0-9-]{0,6}$", "[0-9]"}
	genStrings  = []string{"", "a", "abc", "T-12", "T-0", "web", "x-y", "ééé", "ABCD", "9", "aaaaaaaa", "a b", "é", "T-1"}
	genNumbers  = []string{"0", "1", "-1", "2", "2.5", "1.0", "1e2", "0.1", "0.3", "10", "100", "-0.5", "3", "1000000", "12345678901234567890", "1e-7"}
	genTypes    = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
	genMultiple = []string{"1", "2", "0.5", "0.1", "3", "1e-7"}
)

// schema draws a schema; root adds $defs that $ref may use.
func (g *gen) schema(depth int, root bool) map[string]any {
	s := map[string]any{}
	if root && g.chance(0.3) {
		defs := map[string]any{}
		for i := 0; i < 1+g.pick(2); i++ {
			name := fmt.Sprintf("d%d", i)
			defs[name] = g.leafy(depth + 1)
			g.defs = append(g.defs, name)
		}
		s["$defs"] = defs
	}
	shape := g.pick(10)
	switch {
	case shape < 4:
		g.object(s, depth)
	case shape < 5:
		g.array(s, depth)
	case shape < 6 && depth < 3:
		kw := []string{"anyOf", "oneOf", "allOf"}[g.pick(3)]
		var subs []any
		for i := 0; i < 1+g.pick(3); i++ {
			subs = append(subs, g.sub(depth+1))
		}
		s[kw] = subs
	case shape < 7 && depth < 3:
		s["not"] = g.sub(depth + 1)
		if g.chance(0.5) {
			s["type"] = genTypes[g.pick(len(genTypes))]
		}
	default:
		for k, v := range g.leafy(depth) {
			s[k] = v
		}
	}
	if len(g.defs) > 0 && g.chance(0.15) {
		s["$ref"] = "#/$defs/" + g.defs[g.pick(len(g.defs))]
	}
	if g.chance(0.1) {
		s["description"] = "drawn"
	}
	return s
}

// sub is a subschema: now and then a boolean one.
func (g *gen) sub(depth int) any {
	if g.chance(0.05) {
		return g.chance(0.5)
	}
	if depth > 3 {
		return g.leafy(depth)
	}
	return g.schema(depth, false)
}

func (g *gen) object(s map[string]any, depth int) {
	s["type"] = "object"
	props := map[string]any{}
	for i := 0; i < g.pick(4); i++ {
		props[genNames[g.pick(len(genNames))]] = g.sub(depth + 1)
	}
	s["properties"] = props
	if g.chance(0.6) {
		req := []any{}
		seen := map[string]bool{}
		for i := 0; i < g.pick(3); i++ {
			n := genNames[g.pick(len(genNames))]
			if !seen[n] {
				seen[n] = true
				req = append(req, n)
			}
		}
		s["required"] = req
	}
	switch g.pick(4) {
	case 0:
		s["additionalProperties"] = false
	case 1:
		s["additionalProperties"] = g.sub(depth + 1)
	case 2:
		s["additionalProperties"] = true
	}
	if g.chance(0.1) {
		s["patternProperties"] = map[string]any{genPatterns[g.pick(len(genPatterns))]: g.sub(depth + 1)}
	}
	if g.chance(0.15) {
		s["minProperties"] = g.pick(3)
	}
	if g.chance(0.15) {
		s["maxProperties"] = g.pick(4)
	}
}

func (g *gen) array(s map[string]any, depth int) {
	s["type"] = "array"
	if g.chance(0.8) {
		s["items"] = g.sub(depth + 1)
	}
	if g.chance(0.2) {
		var pre []any
		for i := 0; i < 1+g.pick(2); i++ {
			pre = append(pre, g.sub(depth+1))
		}
		s["prefixItems"] = pre
	}
	if g.chance(0.3) {
		s["minItems"] = g.pick(3)
	}
	if g.chance(0.3) {
		s["maxItems"] = g.pick(5)
	}
	if g.chance(0.3) {
		s["uniqueItems"] = g.chance(0.8)
	}
}

// leafy draws a schema for a scalar.
func (g *gen) leafy(int) map[string]any {
	s := map[string]any{}
	switch g.pick(7) {
	case 0, 1:
		s["type"] = "string"
		if g.chance(0.5) {
			s["minLength"] = g.pick(3)
		}
		if g.chance(0.5) {
			s["maxLength"] = g.pick(6)
		}
		if g.chance(0.5) {
			s["pattern"] = genPatterns[g.pick(len(genPatterns))]
		}
	case 2, 3:
		s["type"] = []string{"number", "integer"}[g.pick(2)]
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if g.chance(0.3) {
				s[k] = json.Number(genNumbers[g.pick(len(genNumbers))])
			}
		}
		if g.chance(0.25) {
			s["multipleOf"] = json.Number(genMultiple[g.pick(len(genMultiple))])
		}
	case 4:
		var vals []any
		for i := 0; i < 1+g.pick(4); i++ {
			vals = append(vals, g.scalar())
		}
		s["enum"] = vals
	case 5:
		s["const"] = g.value(1)
	default:
		n := 1 + g.pick(2)
		var ts []any
		for _, i := range g.r.Perm(len(genTypes))[:n] {
			ts = append(ts, genTypes[i])
		}
		if n == 1 && g.chance(0.5) {
			s["type"] = ts[0]
		} else {
			s["type"] = ts
		}
	}
	return s
}

func (g *gen) scalar() any {
	switch g.pick(5) {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2, 3:
		return genStrings[g.pick(len(genStrings))]
	}
	return json.Number(genNumbers[g.pick(len(genNumbers))])
}

// value draws any JSON value.
func (g *gen) value(depth int) any {
	if depth > 2 {
		return g.scalar()
	}
	switch g.pick(6) {
	case 0:
		var arr []any
		for i := 0; i < g.pick(4); i++ {
			arr = append(arr, g.value(depth+1))
		}
		if arr == nil {
			arr = []any{}
		}
		return arr
	case 1:
		obj := map[string]any{}
		for i := 0; i < g.pick(3); i++ {
			obj[genNames[g.pick(len(genNames))]] = g.value(depth + 1)
		}
		return obj
	}
	return g.scalar()
}

// doc draws a document for schema s (decoded JSON of a schema, with
// root the whole document for $ref).
func (g *gen) doc(s any, root map[string]any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 6 || g.chance(0.08) {
		return g.value(depth)
	}
	if ref, ok := m["$ref"].(string); ok && g.chance(0.5) {
		if target := lookupPointer(root, strings.TrimPrefix(ref, "#")); target != nil {
			return g.doc(target, root, depth+1)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if subs, ok := m[kw].([]any); ok && len(subs) > 0 {
			return g.doc(subs[g.pick(len(subs))], root, depth+1)
		}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 && g.chance(0.8) {
		return e[g.pick(len(e))]
	}
	if c, ok := m["const"]; ok && g.chance(0.8) {
		return c
	}
	t := m["type"]
	if ts, ok := t.([]any); ok && len(ts) > 0 {
		t = ts[g.pick(len(ts))]
	}
	if ts, ok := t.([]string); ok && len(ts) > 0 {
		t = ts[g.pick(len(ts))]
	}
	switch t {
	case "object":
		obj := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for name, sub := range props {
			if g.chance(0.8) {
				obj[name] = g.doc(sub, root, depth+1)
			}
		}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if name, _ := r.(string); name != "" && g.chance(0.9) {
					if _, have := obj[name]; !have {
						obj[name] = g.doc(props[name], root, depth+1)
					}
				}
			}
		}
		if g.chance(0.15) {
			obj[genNames[g.pick(len(genNames))]] = g.value(depth + 1)
		}
		return obj
	case "array":
		var arr []any
		pre, _ := m["prefixItems"].([]any)
		for i := 0; i < g.pick(5); i++ {
			var sub any = m["items"]
			if i < len(pre) {
				sub = pre[i]
			}
			arr = append(arr, g.doc(sub, root, depth+1))
		}
		if arr == nil {
			arr = []any{}
		}
		return arr
	case "string":
		if p, ok := m["pattern"].(string); ok && g.chance(0.6) {
			if re, err := syntax.Parse(p, syntax.Perl); err == nil {
				var b strings.Builder
				g.sample(&b, re)
				return b.String()
			}
		}
		if n, ok := m["minLength"].(float64); ok && g.chance(0.5) {
			return strings.Repeat("é", max(0, int(n)+g.pick(2)-g.pick(2)))
		}
		return genStrings[g.pick(len(genStrings))]
	case "number", "integer":
		return json.Number(genNumbers[g.pick(len(genNumbers))])
	case "boolean":
		return g.chance(0.5)
	case "null":
		return nil
	}
	return g.value(depth)
}

func lookupPointer(root map[string]any, ptr string) any {
	var cur any = root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return cur
}

// sample writes a string the regular expression matches (most of the
// time: anchors inside a repetition are not honoured).
func (g *gen) sample(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) >= 2 {
			i := 2 * g.pick(len(re.Rune)/2)
			lo, hi := re.Rune[i], re.Rune[i+1]
			b.WriteRune(lo + rune(g.pick(int(min(hi-lo, 25))+1)))
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture:
		g.sample(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			g.sample(b, sub)
		}
	case syntax.OpAlternate:
		g.sample(b, re.Sub[g.pick(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		for i := lo + g.pick(hi-lo+1); i > 0; i-- {
			g.sample(b, re.Sub[0])
		}
	}
}
