package importer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineFormat is a format of one JSON object per line (cairn's JSON Lines,
// beads' issues.jsonl): what bounds a line, what one line holds, where an
// unreadable line's own id sits, and how a line becomes a task.
type lineFormat struct {
	maxLine int
	// item names what one line holds, for the refusal of a long line.
	item string
	// idKey is the member read loosely from a line that cannot be
	// parsed, so its skip names the item.
	idKey string
	parse func(w Where, b []byte) (Task, error)
}

// scanFile scans f from its start.
func (lf lineFormat) scanFile(file string, f io.ReadSeeker, yield func(Task) error) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Refuse(Where{File: file}, "path", "readable", "cannot read the file: %v", err)
	}
	return lf.scan(file, f, yield)
}

// scan yields the tasks of r one line at a time: it holds one line, never
// the file. Blank lines are skipped; a line it cannot read as a task
// (itemError) is yielded skipped; any other error refuses the file.
func (lf lineFormat) scan(file string, r io.Reader, yield func(Task) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), lf.maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		w := Where{File: file, Line: line}
		t, err := lf.parse(w, b)
		if err != nil {
			if !itemError(err) {
				return err
			}
			t = skippedTask(w, looseKey(b, lf.idKey), err)
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		w := Where{File: file, Line: line + 1}
		if errors.Is(err, bufio.ErrTooLong) {
			return Refuse(w, "", "maxLength", "a line is longer than %d bytes; one line holds one %s", lf.maxLine, lf.item)
		}
		return Refuse(w, "", "readable", "cannot read the file: %v", err)
	}
	return nil
}
