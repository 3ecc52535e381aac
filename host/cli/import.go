package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn import` and `cairn export tasks` (docs/decisions.md D41): the core
// area reads or writes the file itself, through its internal task_import
// and task_export tools, in the running daemon or in a host of the
// command's own; the host only resolves the paths and the project.

func init() { register(newImport) }

// importTimeout bounds an import through the daemon.
const importTimeout = 30 * time.Minute

// importProject is the project a command works in: --project, else the
// default project of D24 (CAIRN_PROJECT, else the workspace directory's
// slug), registered as a session's start registers it.
func importProject(cmd *cobra.Command, c *areaClient, flag string) (string, error) {
	if flag != "" {
		if !validSlug(flag) {
			return "", errs.Invalidf("project", "pattern", "project slug %q must match ^[a-z0-9][a-z0-9-]{0,62}$", flag)
		}
		return flag, nil
	}
	slug := clientsession.Default(c.s).Project
	if _, err := c.call(cmd.Context(), "project_register", obj{"slug": slug}, nil); err != nil {
		return "", err
	}
	return slug, nil
}

func newImport() *cobra.Command {
	var configFile, format, project string
	var tags []string
	var asJSON, strict, dryRun bool
	cmd := &cobra.Command{
		Use:   "import <file|folder>",
		Short: "Import tasks from JSON Lines, task-master, Backlog.md, beads or Claude Code",
		Long: `Import tasks into a project as task_create and task_update calls would make
them (numbers, sequences, hash chains, events), in transactions of thousands
of tasks; each task keeps its id and times in the source (task_get's
source). The whole input is checked first. By default every task that can
be imported is, and a report lists each one changed or skipped with its
place, the rule, what was done and the fix: a text over a field's limit is
cut there and kept whole in the task's thought trail, a duplicate id is
renumbered, a dependency or parent not in the import and the link that
closes a loop are dropped, a status or priority the source's tool lacks
becomes cairn's nearest (else backlog, normal), an item that cannot be read
(a field of the wrong type, malformed front matter) and a task breaking
another rule are skipped; an input that is not JSON is refused.
--strict: the first problem is refused naming the file, the line (or the
Backlog.md file) and the field, and nothing is written. --dry-run: the
report, nothing written. Exit status: 0 imported (changed or not), 1
nothing imported or refused, 2 usage. Formats (docs/cli.md has how each
field maps):
  jsonl       one task per line, as cairn export tasks writes them (*.jsonl)
  taskmaster  task-master's tasks.json, plain or tagged (*.json): every tag,
              or those --tag names; each tag but master into a project named
              after it (registered when new) unless --project names one
  backlog     a Backlog.md board: backlog/ or backlog/tasks/ (a folder)
  beads       beads' issues: .beads/ or .beads/issues.jsonl (or *.jsonl of
              beads issues)
  claude      a Claude Code task list: ~/.claude/tasks/<list>/ (a folder of
              *.json files)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := filepath.Abs(args[0])
			if err != nil {
				return errs.Invalidf("path", "readable", "cannot resolve %s: %v", args[0], err)
			}
			if _, err := os.Stat(path); err != nil {
				return errs.Invalidf("path", "exists", "cannot read %s: %v", args[0], err)
			}
			c, err := openAreas(cmd.Context(), configFile, writes, "core")
			if err != nil {
				return err
			}
			defer c.close()
			// 100,000 tasks take about a minute on a quiet machine; a busy
			// one may need several.
			c.timeout = importTimeout
			slug, err := importProject(cmd, c, project)
			if err != nil {
				return err
			}
			// The area writes the id each source id got to a file of
			// this command's, so that the answer of an import of any size
			// stays small (docs/decisions.md D41).
			ids, err := os.CreateTemp("", "cairn-import-ids-*.jsonl")
			if err != nil {
				return errs.Newf(500, errs.Internal, "cannot create a temporary file: %v", err)
			}
			_ = ids.Close()
			defer func() { _ = os.Remove(ids.Name()) }()
			var out importAnswer
			in := obj{"path": path, "project": slug, "ids_path": ids.Name()}
			if format != "" {
				in["format"] = format
			}
			if len(tags) > 0 {
				in["tags"] = tags
			}
			if project == "" {
				in["tag_projects"] = true
			}
			if strict {
				in["strict"] = true
			}
			if dryRun {
				in["dry_run"] = true
			}
			if _, err := c.call(cmd.Context(), "task_import", in, &out); err != nil {
				return err
			}
			if asJSON {
				err = printImport(cmd.OutOrStdout(), out, ids.Name())
			} else {
				err = printImportReport(cmd.OutOrStdout(), out)
			}
			if err == nil && out.Imported == 0 {
				return quietExit(1) // nothing imported: the report says why
			}
			return err
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	cmd.Flags().StringVar(&format, "format", "", "jsonl, taskmaster, backlog, beads or claude (default: told by the path)")
	cmd.Flags().StringVar(&project, "project", "", "registered project every task goes into (default: CAIRN_PROJECT, else the workspace's project; a task-master tag but master into its own)")
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "task-master tag of a tagged tasks.json to import, repeatable (default: every tag)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tool's output, with the task id each source id got and the report")
	cmd.Flags().BoolVar(&strict, "strict", false, "all or nothing: refuse the whole input on its first problem")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the input and print the report; write nothing")
	return cmd
}

// importAnswer is task_import's answer when the ids go to a file.
type importAnswer struct {
	Project       string         `json:"project"`
	Projects      []string       `json:"projects"`
	Imported      int            `json:"imported"`
	Transactions  int            `json:"transactions"`
	DryRun        bool           `json:"dry_run,omitempty"`
	Report        []importChange `json:"report"`
	Changes       int            `json:"changes"`
	Skipped       int            `json:"skipped"`
	ReportLeftOut int            `json:"report_left_out,omitempty"`
}

// importChange is one entry of the import's report.
type importChange struct {
	Place  string `json:"place"`
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Action string `json:"action"`
	Fix    string `json:"fix"`
}

// printImportReport prints the answer for a person: one line saying what
// was imported, then each change or skip with its place, field and rule,
// what the import did and the fix.
func printImportReport(w io.Writer, out importAnswer) error {
	bw := bufio.NewWriter(w)
	switch {
	case out.DryRun:
		fmt.Fprintf(bw, "dry run: would import %d tasks into project %s; nothing was written\n", out.Imported, out.Project)
	case out.Imported == 0:
		fmt.Fprintf(bw, "imported nothing into project %s\n", out.Project)
	case len(out.Projects) > 0:
		fmt.Fprintf(bw, "imported %d tasks into projects %s in %d transactions\n", out.Imported, strings.Join(append([]string{out.Project}, out.Projects...), ", "), out.Transactions)
	default:
		fmt.Fprintf(bw, "imported %d tasks into project %s in %d transactions\n", out.Imported, out.Project, out.Transactions)
	}
	if len(out.Report) > 0 || out.Changes+out.Skipped > 0 {
		fmt.Fprintf(bw, "%d changed, %d skipped:\n", out.Changes, out.Skipped)
	}
	for _, r := range out.Report {
		field := r.Field
		if field == "" {
			field = "task"
		}
		fmt.Fprintf(bw, "  %s: %s (%s): %s\n    fix: %s\n", r.Place, field, r.Rule, r.Action, r.Fix)
	}
	if out.ReportLeftOut > 0 {
		fmt.Fprintf(bw, "  … and %d more, left out of the report\n", out.ReportLeftOut)
	}
	return bw.Flush()
}

// printImport prints the answer with the ids of the file the area wrote
// as one JSON object, {"project","projects" (when the import wrote to
// others),"imported","ids":{source id: task id},"transactions","report",
// "changes","skipped"}, copying the ids a line at a time.
func printImport(w io.Writer, out importAnswer, idsFile string) error {
	f, err := os.Open(idsFile)
	if err != nil {
		return errs.Newf(500, errs.Internal, "cannot read the ids of the import: %v", err)
	}
	defer func() { _ = f.Close() }()
	bw := bufio.NewWriterSize(w, 64<<10)
	project, _ := json.Marshal(out.Project)
	fmt.Fprintf(bw, `{"project":%s,`, project)
	if len(out.Projects) > 0 {
		projects, _ := json.Marshal(out.Projects)
		fmt.Fprintf(bw, `"projects":%s,`, projects)
	}
	fmt.Fprintf(bw, `"imported":%d,"ids":{`, out.Imported)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 0; sc.Scan(); n++ {
		var pair [2]string
		if err := json.Unmarshal(sc.Bytes(), &pair); err != nil {
			return errs.Newf(500, errs.Internal, "the ids of the import are unreadable at line %d: %v", n+1, err)
		}
		key, _ := json.Marshal(pair[0])
		id, _ := json.Marshal(pair[1])
		if n > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.Write(key)
		_ = bw.WriteByte(':')
		_, _ = bw.Write(id)
	}
	if err := sc.Err(); err != nil {
		return errs.Newf(500, errs.Internal, "cannot read the ids of the import: %v", err)
	}
	tail, err := json.Marshal(struct {
		Transactions  int            `json:"transactions"`
		DryRun        bool           `json:"dry_run,omitempty"`
		Report        []importChange `json:"report"`
		Changes       int            `json:"changes"`
		Skipped       int            `json:"skipped"`
		ReportLeftOut int            `json:"report_left_out,omitempty"`
	}{out.Transactions, out.DryRun, out.Report, out.Changes, out.Skipped, out.ReportLeftOut})
	if err != nil {
		return errs.Newf(500, errs.Internal, "cannot print the import's report: %v", err)
	}
	// The rest of the answer closes the object the ids opened.
	_, _ = bw.WriteString("},")
	_, _ = bw.Write(tail[1:])
	_ = bw.WriteByte('\n')
	return bw.Flush()
}
