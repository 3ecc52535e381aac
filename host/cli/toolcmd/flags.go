package toolcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// binding ties one flag to the property it sets.
type binding struct {
	flag string
	// path is the property's place in the arguments ("rate_limit",
	// "per_minute" for a flattened one).
	path []string
	prop *property
	kind kind
	// json holds a kindJSON flag's value.
	json *jsonValue
}

// bindFlags adds a flag for every property of schema the spec offers as a
// flag, named by names (dotted path → flag) or else in kebab-case; the
// kebab-case spelling of a renamed flag is accepted too, unless it is
// reserved.
func bindFlags(fs *pflag.FlagSet, schema *property, spec Spec, names map[string]string, reserved []string) ([]*binding, error) {
	skip := map[string]bool{}
	for _, a := range spec.Args {
		skip[a] = true
	}
	for _, o := range spec.Omit {
		skip[o] = true
	}
	required := map[string]bool{}
	for _, r := range spec.Required {
		required[r] = true
	}
	flatten := map[string]bool{}
	for _, f := range spec.Flatten {
		flatten[f] = true
	}
	var out []*binding
	aliases := map[string]string{}
	add := func(path []string, p *property, req bool) error {
		key := strings.Join(path, ".")
		name := names[key]
		if name == "" {
			name = Kebab(path[len(path)-1])
		} else if k := Kebab(path[len(path)-1]); k != name && !contains(reserved, k) {
			aliases[k] = name
		}
		if contains(reserved, name) {
			return fmt.Errorf("tool %s: property %s would be the flag --%s, which the command's parents define; name its flag otherwise", spec.Tool, key, name)
		}
		if fs.Lookup(name) != nil {
			return fmt.Errorf("tool %s: two properties would be the flag --%s", spec.Tool, name)
		}
		def, hasDef := spec.Defaults[key]
		if !hasDef && p.Default != nil {
			def, hasDef = p.Default, true
		}
		if _, given := spec.Defaults[key]; given {
			req = false
		}
		b := &binding{flag: name, path: path, prop: p, kind: kindOf(p)}
		text := help(key, p, req)
		switch b.kind {
		case kindString:
			s, _ := def.(string)
			fs.String(name, s, text)
		case kindInteger:
			n, _ := number(def)
			fs.Int64(name, int64(n), text)
		case kindNumber:
			n, _ := number(def)
			fs.Float64(name, n, text)
		case kindBoolean:
			v, _ := def.(bool)
			fs.Bool(name, v, text)
		case kindArray:
			var list []string
			if arr, ok := def.([]any); ok {
				for _, x := range arr {
					list = append(list, fmt.Sprint(x))
				}
			}
			fs.StringSlice(name, list, text)
		default:
			b.json = &jsonValue{}
			if hasDef {
				raw, _ := json.Marshal(def)
				b.json.text = string(raw)
			}
			fs.Var(b.json, name, text)
		}
		out = append(out, b)
		return nil
	}
	for _, n := range schema.names() {
		if skip[n] {
			continue
		}
		p := schema.Properties[n]
		if err := add([]string{n}, p, schema.requires(n) || required[n]); err != nil {
			return nil, err
		}
		if flatten[n] {
			for _, sub := range p.names() {
				if err := add([]string{n, sub}, p.Properties[sub], false); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(aliases) > 0 {
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if to, ok := aliases[name]; ok {
				return pflag.NormalizedName(to)
			}
			return pflag.NormalizedName(name)
		})
	}
	return out, nil
}

// value reads a flag the command line set as the property's value.
func (b *binding) value(fs *pflag.FlagSet) (any, error) {
	switch b.kind {
	case kindString:
		return fs.GetString(b.flag)
	case kindInteger:
		return fs.GetInt64(b.flag)
	case kindNumber:
		return fs.GetFloat64(b.flag)
	case kindBoolean:
		return fs.GetBool(b.flag)
	case kindArray:
		list, err := fs.GetStringSlice(b.flag)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(list))
		for i, s := range list {
			v, err := parseAs(kindOf(b.prop.Items), s)
			if err != nil {
				return nil, fmt.Errorf("invalid argument %q for --%s: %v", s, b.flag, err)
			}
			out[i] = v
		}
		return out, nil
	default:
		return b.json.value, nil
	}
}

// parseAs reads one command-line word as a value of kind k.
func parseAs(k kind, s string) (any, error) {
	switch k {
	case kindString:
		return s, nil
	case kindInteger:
		return strconv.ParseInt(s, 10, 64)
	case kindNumber:
		return strconv.ParseFloat(s, 64)
	case kindBoolean:
		return strconv.ParseBool(s)
	}
	return parseJSON(s)
}

func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not one JSON value")
	}
	return v, nil
}

// number reads a schema default as a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// jsonValue is a flag whose value is JSON text.
type jsonValue struct {
	text  string
	value any
}

func (j *jsonValue) String() string { return j.text }

func (j *jsonValue) Set(s string) error {
	v, err := parseJSON(s)
	if err != nil {
		return err
	}
	var canon bytes.Buffer
	_ = json.Compact(&canon, []byte(s))
	j.text, j.value = canon.String(), v
	return nil
}

func (j *jsonValue) Type() string { return "json" }
