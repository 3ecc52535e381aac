package toolcmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// ToolAnnotation is the annotation of a generated command that names its
// tool (the reference and the inventory checks find commands by it).
const ToolAnnotation = "cairn.tool"

// Builder makes commands from an inventory of tools.
type Builder struct {
	Tools   Inventory
	Runtime Runtime
	// FlagNames names the flags whose name is not the property's kebab-case
	// spelling, by property path ("user_id" → "user",
	// "rate_limit.per_minute" → …); the kebab-case spelling stays accepted.
	FlagNames map[string]string
	// Reserved are the flags the commands' parents define (--config,
	// --json): no property may take one, by name or by alias.
	Reserved []string
}

// Command generates the command for one tool. It panics when the spec names
// a tool the inventory lacks or its schema cannot be read: a build mistake
// that every test building the command tree catches.
func (b Builder) Command(spec Spec) *cobra.Command {
	t, ok := b.Tools[spec.Tool]
	if !ok {
		panic(fmt.Sprintf("toolcmd: no tool %s in the inventory", spec.Tool))
	}
	top, err := parseSchema(t.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("toolcmd: tool %s: %v", t.Name, err))
	}
	use := spec.Use
	if !strings.Contains(use, " ") {
		for _, a := range spec.Args {
			use += " <" + Kebab(a) + ">"
		}
	}
	short := spec.Short
	if short == "" {
		short = t.Title
	}
	cmd := &cobra.Command{
		Use:         use,
		Short:       short,
		Long:        t.Description,
		Args:        spec.PositionalArgs,
		Annotations: map[string]string{ToolAnnotation: t.Name},
	}
	if cmd.Args == nil {
		cmd.Args = cobra.ExactArgs(len(spec.Args))
	}
	bindings, err := bindFlags(cmd.Flags(), top, spec, b.FlagNames, append([]string{"help"}, b.Reserved...))
	if err != nil {
		panic("toolcmd: " + err.Error())
	}
	for _, bd := range bindings {
		_, defaulted := spec.Defaults[strings.Join(bd.path, ".")]
		if len(bd.path) == 1 && !defaulted && (top.requires(bd.path[0]) || contains(spec.Required, bd.path[0])) {
			_ = cmd.MarkFlagRequired(bd.flag)
		}
	}
	if spec.Flags != nil {
		spec.Flags(cmd.Flags())
	}
	// The validator is compiled on the first run only: help stays cheap.
	validator := sync.OnceValues(func() (*schema.Validator, error) { return schema.Compile(t.InputSchema) })
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		in, err := assemble(cmd, top, spec, bindings, args)
		if err != nil {
			return b.Runtime.Usage(cmd, err.Error())
		}
		conn, err := b.Runtime.Connect(cmd, t.ReadOnly)
		if err != nil {
			return err
		}
		defer conn.Close()
		inv := &Invocation{Cmd: cmd, Positional: args, In: in, Conn: conn}
		if spec.Prepare != nil {
			if err := spec.Prepare(inv); err != nil {
				return err
			}
		}
		v, err := validator()
		if err != nil {
			return errs.Newf(500, errs.Internal, "tool %s: input schema: %v", t.Name, err)
		}
		doc, err := json.Marshal(inv.In)
		if err != nil {
			return errs.New(500, errs.Internal, err.Error())
		}
		// Refused here as the tool would refuse it: same field, rule and
		// message, without a call.
		if e := v.Validate(doc); e != nil {
			return e
		}
		raw, err := conn.Call(cmd.Context(), t.Name, inv.In, nil)
		if err != nil {
			return err
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			return errs.Newf(502, errs.ToolOutputMalformed, "%s answered %q: %v", t.Name, raw, err)
		}
		obj, _ := out.(map[string]any)
		if spec.Check != nil {
			if err := spec.Check(inv, obj); err != nil {
				return err
			}
		}
		if b.Runtime.JSON(cmd) {
			return writeJSON(cmd.OutOrStdout(), out)
		}
		return render(cmd.OutOrStdout(), spec.Render, obj, inv)
	}
	return cmd
}

// Group is a command that holds generated commands ("cairn admin keys").
func Group(use, short string, cmds ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: use, Short: short}
	g.AddCommand(cmds...)
	return g
}

// assemble builds the tool's arguments from the positional arguments, the
// flags the command line set and the spec's defaults.
func assemble(cmd *cobra.Command, top *property, spec Spec, bindings []*binding, args []string) (map[string]any, error) {
	in := map[string]any{}
	for i, a := range args {
		if i >= len(spec.Args) {
			break
		}
		name := spec.Args[i]
		k := kindJSON
		if p := top.Properties[name]; p != nil {
			k = kindOf(p)
		}
		v, err := parseAs(k, a)
		if err != nil {
			return nil, fmt.Errorf("invalid argument %q for <%s>: %v", a, Kebab(name), err)
		}
		in[name] = v
	}
	for _, bd := range bindings {
		if !cmd.Flags().Changed(bd.flag) {
			continue
		}
		v, err := bd.value(cmd.Flags())
		if err != nil {
			return nil, err
		}
		setPath(in, bd.path, v)
	}
	for key, v := range spec.Defaults {
		path := strings.Split(key, ".")
		if _, set := getPath(in, path); !set {
			setPath(in, path, v)
		}
	}
	return in, nil
}

// setPath sets in at a property path, making the objects on the way; a
// flattened property's flag lands inside the object its JSON flag gave.
func setPath(in map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := in[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			in[k] = next
		}
		in = next
	}
	in[path[len(path)-1]] = v
}

// getPath reads in at a property path.
func getPath(in map[string]any, path []string) (any, bool) {
	var cur any = in
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
