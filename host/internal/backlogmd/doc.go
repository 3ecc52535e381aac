// Package backlogmd writes a project's tasks as a Backlog.md board: one
// Markdown file per task with YAML frontmatter, in the folder that says
// where the task stands, and keeps such a folder current (docs/decisions.md
// D41). It formats what the core area's task_export answers and knows
// nothing of the store: the same tasks always give the same bytes, so a
// team can commit the folder and review work in pull requests.
package backlogmd
