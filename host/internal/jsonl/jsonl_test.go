package jsonl

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
)

func TestReadLineNeverKeepsAnOversizedLine(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("x", 5000) + "\n" + `{"ok":1}` + "\n" + strings.Repeat("y", 100)
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	line, tooLong, err := ReadLine(r, 1024)
	if !tooLong || line != nil || err != nil {
		t.Fatalf("first line: %q %v %v", line, tooLong, err)
	}
	line, tooLong, err = ReadLine(r, 1024)
	if tooLong || string(line) != "{\"ok\":1}\n" || err != nil {
		t.Fatalf("second line: %q %v %v", line, tooLong, err)
	}
	line, tooLong, err = ReadLine(r, 1024)
	if tooLong || len(line) != 100 || err == nil {
		t.Fatalf("last line: %d bytes %v %v", len(line), tooLong, err)
	}
}

func TestTooLongErrorNamesTheLimit(t *testing.T) {
	t.Parallel()
	if !strings.Contains(string(TooLongError(1024)), strconv.Itoa(1024)) {
		t.Error("the error does not name the limit")
	}
}
