package backlogmd

import (
	"regexp"
	"strings"
)

// Prefix is the task_prefix of the boards cairn writes: cairn's task ids
// are T-<n>, so Backlog.md's ids T-<n> are the same ids, and its file
// names, which it writes in lower case, start t-<n>.
const Prefix = "T"

// Folders of a board, as Backlog.md lays it out, that hold the files this
// package writes.
const (
	TasksDir     = "tasks"
	CompletedDir = "completed"
	ArchiveDir   = "archive/tasks"
	ConfigFile   = "config.yml"
)

// ManagedDirs are the folders whose files a sync may remove, and the
// names of the files it writes there: no other file is touched.
var ManagedDirs = map[string]*regexp.Regexp{
	TasksDir: ownFile, CompletedDir: ownFile, ArchiveDir: ownFile,
	"decisions": regexp.MustCompile(`^decision-[0-9]+(?: - .*)?\.md$`),
}

// folderOf is where a task of status stands: done tasks in completed/,
// cancelled ones in archive/tasks/ (Backlog.md's archive), the rest on the
// board.
func folderOf(status string) string {
	switch status {
	case "done":
		return CompletedDir
	case "cancelled":
		return ArchiveDir
	}
	return TasksDir
}

// statusNames are cairn's statuses as the board shows them: Backlog.md's
// own names where it has one.
var statusNames = map[string]string{
	"backlog": "Backlog", "todo": "To Do", "in_progress": "In Progress", "blocked": "Blocked",
	"review": "Review", "done": "Done", "cancelled": "Cancelled",
}

// Statuses are the board's columns, in cairn's lifecycle order.
var Statuses = []string{"Backlog", "To Do", "In Progress", "Blocked", "Review", "Done", "Cancelled"}

// priorityNames are cairn's priorities as Backlog.md names them (its
// medium is cairn's normal; critical it does not have, cairn's import
// reads it back).
var priorityNames = map[string]string{"low": "low", "normal": "medium", "high": "high", "critical": "critical"}

// maxTitleInName bounds the title part of a file name, in bytes: names
// stay well under the 255 bytes file systems allow.
const maxTitleInName = 120

// unsafeInName and noiseInName are what Backlog.md takes out of a title to
// name its file: path-unsafe characters become dashes, noisy punctuation
// goes, and runs of spaces and dashes become one dash.
var (
	unsafeInName = regexp.MustCompile(`[<>:"/\\|?*]`)
	noiseInName  = regexp.MustCompile(`['(),!@#$%^&+=\[\]{};]`)
	spaceInName  = regexp.MustCompile(`\s+`)
	dashesInName = regexp.MustCompile(`-+`)
)

// FileName is the name of a task's file: its id in lower case, " - ", and
// its title made safe for a file name, as Backlog.md names its files.
func FileName(taskID, title string) string {
	s := unsafeInName.ReplaceAllString(title, "-")
	s = noiseInName.ReplaceAllString(s, "")
	s = spaceInName.ReplaceAllString(s, "-")
	s = dashesInName.ReplaceAllString(s, "-")
	s = strings.Trim(s, "-.")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > maxTitleInName {
		cut := maxTitleInName
		for cut > 0 && !startsRune(s[cut]) {
			cut--
		}
		s = strings.TrimRight(s[:cut], "-.")
	}
	id := strings.ToLower(taskID)
	if s == "" {
		return id + ".md"
	}
	return id + " - " + s + ".md"
}

// startsRune reports whether b starts a UTF-8 character.
func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// ownFile matches the names of the task files this package writes, the
// only files of the managed folders a sync removes.
var ownFile = regexp.MustCompile(`^t-[0-9]+(?: - .*)?\.md$`)
