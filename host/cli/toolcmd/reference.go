package toolcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Reference writes the Markdown reference of the generated commands under
// each of roots: per group its help and shared flags, per command its
// usage, the tool it calls and a table of its flags. It is what
// docs/cli.md's generated part holds.
func Reference(roots ...*cobra.Command) string {
	var b strings.Builder
	for _, r := range roots {
		writeGroup(&b, r, 3)
	}
	return b.String()
}

func writeGroup(b *strings.Builder, c *cobra.Command, level int) {
	if !generated(c) {
		return
	}
	if tool := c.Annotations[ToolAnnotation]; tool != "" {
		fmt.Fprintf(b, "%s `%s`\n\n", strings.Repeat("#", level), usage(c))
		fmt.Fprintf(b, "%s. Calls `%s`: %s\n\n", strings.TrimSuffix(c.Short, "."), tool, c.Long)
		writeFlags(b, c.LocalNonPersistentFlags())
		return
	}
	fmt.Fprintf(b, "%s `%s`\n\n%s.\n\n", strings.Repeat("#", level), c.CommandPath(), strings.TrimSuffix(c.Short, "."))
	writeFlags(b, c.PersistentFlags())
	for _, s := range c.Commands() {
		writeGroup(b, s, level+1)
	}
}

// generated reports whether c is a generated command or holds one.
func generated(c *cobra.Command) bool {
	if c.Annotations[ToolAnnotation] != "" {
		return true
	}
	for _, s := range c.Commands() {
		if generated(s) {
			return true
		}
	}
	return false
}

// usage is the command's path with its positional arguments.
func usage(c *cobra.Command) string {
	path := c.CommandPath()
	if i := strings.IndexByte(c.Use, ' '); i > 0 {
		path += c.Use[i:]
	}
	return path
}

func writeFlags(b *strings.Builder, fs *pflag.FlagSet) {
	if !fs.HasFlags() {
		return
	}
	b.WriteString("| Flag | Type | Default | Meaning |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		def := f.DefValue
		switch def {
		case "", "0", "false", "[]", "0s":
			def = ""
		default:
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| `--%s` | %s | %s | %s |\n", f.Name, typeName(f.Value.Type()), def, strings.ReplaceAll(f.Usage, "|", `\|`))
	})
	b.WriteString("\n")
}

// typeName names a flag's value type as the schema does.
func typeName(t string) string {
	switch t {
	case "int64", "int":
		return "integer"
	case "float64":
		return "number"
	case "bool":
		return "boolean"
	case "stringSlice":
		return "list"
	}
	return t
}
