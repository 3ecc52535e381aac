package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/internal/backlogmd"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn export tasks` writes a project's tasks as JSON Lines, `cairn export
// --format markdown DIR` as a Backlog.md board that `cairn import DIR` reads
// back (docs/decisions.md D41). The core area writes the JSON Lines through
// its internal task_export tool; the board is formatted here from those
// lines (host/internal/backlogmd): the host never opens the store.

func init() { register(newExport) }

// formatMarkdown is the --format of a Backlog.md board.
const formatMarkdown = "markdown"

func newExport() *cobra.Command {
	var configFile, project, output, format, mdProject string
	var watch bool
	cmd := &cobra.Command{
		Use:   "export [--format markdown DIR [--watch]]",
		Short: "Export data in a form other tools and cairn import read",
		Long: `Export a project's tasks. "cairn export tasks" writes JSON Lines;
"cairn export --format markdown DIR" writes a Backlog.md board into DIR: one
Markdown file per task (tasks/, done ones in completed/, cancelled ones in
archive/tasks/) and a config.yml, byte for byte the same for the same tasks,
which "cairn import DIR" reads back. --watch keeps DIR current, rewriting the
changed tasks' files within a second of each change, until interrupted.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" && len(args) == 0 {
				return cmd.Help()
			}
			if format != formatMarkdown {
				return errs.Invalidf("format", "enum", "--format %q is not markdown (JSON Lines: cairn export tasks)", format)
			}
			if len(args) != 1 {
				return errs.Invalid("dir", "required", "name the folder to write the board to: cairn export --format markdown DIR")
			}
			return exportMarkdown(cmd, configFile, mdProject, args[0], watch)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "markdown: a Backlog.md board in DIR")
	cmd.Flags().StringVar(&mdProject, "project", "", "project whose tasks are written (default: CAIRN_PROJECT, else the workspace's project)")
	cmd.Flags().BoolVar(&watch, "watch", false, "keep DIR current until interrupted (SIGINT or SIGTERM)")
	tasksCmd := &cobra.Command{
		Use:   "tasks",
		Short: "Write a project's tasks as JSON Lines (what cairn import reads back)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := openAreas(cmd.Context(), configFile, reads, "core")
			if err != nil {
				return err
			}
			defer c.close()
			slug := project
			if slug == "" {
				slug = clientsession.Default(c.s).Project
			}
			// The area writes a private temporary file; the command copies
			// it out with the whole texts put back (copyWholeLines).
			tmp, err := os.CreateTemp("", "cairn-export-*.jsonl")
			if err != nil {
				return errs.Newf(500, errs.Internal, "cannot create a temporary file: %v", err)
			}
			_ = tmp.Close()
			defer func() { _ = os.Remove(tmp.Name()) }()
			if _, err := c.call(cmd.Context(), "task_export", obj{"path": tmp.Name(), "project": slug}, nil); err != nil {
				return err
			}
			src, err := os.Open(tmp.Name())
			if err != nil {
				return errs.Newf(500, errs.Internal, "cannot read the export: %v", err)
			}
			defer func() { _ = src.Close() }()
			if output == "" || output == "-" {
				return copyWholeLines(cmd.Context(), c, src, cmd.OutOrStdout())
			}
			dst, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return errs.Invalidf("output", "writable", "cannot write %s: %v", output, err)
			}
			if err := copyWholeLines(cmd.Context(), c, src, dst); err != nil {
				_ = dst.Close()
				return err
			}
			if err := dst.Close(); err != nil {
				return errs.Invalidf("output", "writable", "cannot finish %s: %v", output, err)
			}
			return nil
		},
	}
	tasksCmd.Flags().StringVar(&project, "project", "", "project whose tasks are written (default: CAIRN_PROJECT, else the workspace's project)")
	tasksCmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: stdout)")
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	cmd.AddCommand(tasksCmd)
	return cmd
}

// exportMarkdown writes the project's board into dir, then, with watch,
// keeps it current.
func exportMarkdown(cmd *cobra.Command, configFile, project, dir string, watch bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return errs.Invalidf("dir", "writable", "cannot resolve %s: %v", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.Invalidf("dir", "writable", "cannot create %s: %v", dir, err)
	}
	slug := project
	if slug == "" {
		s, cleanup, err := settings(configFile)
		if err != nil {
			return err
		}
		slug = clientsession.Default(s).Project
		cleanup()
	}
	if watch {
		return watchMarkdown(cmd, configFile, slug, dir)
	}
	c, err := openAreas(cmd.Context(), configFile, reads, "core")
	if err != nil {
		return err
	}
	defer c.close()
	board, n, err := loadBoard(cmd.Context(), c, slug)
	if err != nil {
		return err
	}
	written, removed, err := backlogmd.Sync(dir, board, nil)
	if err != nil {
		return errs.Newf(500, errs.Internal, "cannot write the board to %s: %v", dir, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "exported %d tasks of project %s to %s (%d files written, %d removed)\n", n, slug, dir, written, removed)
	return nil
}

// loadBoard reads the project's tasks through task_export and formats
// them as a board; n is how many tasks it holds.
func loadBoard(ctx context.Context, c *areaClient, project string) (backlogmd.Board, int, error) {
	f, err := os.CreateTemp("", "cairn-export-*.jsonl")
	if err != nil {
		return nil, 0, errs.Newf(500, errs.Internal, "cannot create a temporary file: %v", err)
	}
	_ = f.Close()
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := c.call(ctx, "task_export", obj{"path": f.Name(), "project": project}, nil); err != nil {
		return nil, 0, err
	}
	in, err := os.Open(f.Name())
	if err != nil {
		return nil, 0, errs.Newf(500, errs.Internal, "cannot read the export: %v", err)
	}
	defer func() { _ = in.Close() }()
	var tasks []backlogmd.Task
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var t backlogmd.Task
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, 0, errs.Newf(502, errs.ToolOutputMalformed, "task_export wrote a line that is not a task (%v)", err)
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, errs.Newf(500, errs.Internal, "cannot read the export: %v", err)
	}
	if err := wholeTexts(ctx, c, tasks); err != nil {
		return nil, 0, err
	}
	var decisions []backlogmd.Record
	shown := 0
	for _, t := range tasks {
		if !backlogmd.IsDecisions(t) {
			shown++
			continue
		}
		rs, err := decisionRecords(ctx, c, t.TaskID)
		if err != nil {
			return nil, 0, err
		}
		decisions = append(decisions, rs...)
	}
	return backlogmd.Build(project, tasks, decisions), shown, nil
}

// decisionRecords reads the records of type decision of the task that
// holds a board's decisions.
func decisionRecords(ctx context.Context, c *areaClient, taskID string) ([]backlogmd.Record, error) {
	return trailRecords(ctx, c, taskID, "decision")
}
