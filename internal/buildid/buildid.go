// Package buildid reads the Go build ID an executable carries: the string
// `go tool buildid` prints, a hash of the build's inputs and its output.
// cairn uses it to know that a helper binary beside it is the one built
// with it (docs/decisions.md D46), without starting that binary or hashing
// all of it.
package buildid

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNone is returned for a file that carries no Go build ID.
var ErrNone = errors.New("no Go build ID")

// headLen is how much of a non-ELF file is searched: the Go linker puts
// the ID at the start of the text, within the first few pages.
const headLen = 64 << 10

// Read returns the Go build ID of the executable at path.
func Read(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return "", fmt.Errorf("%s: %w", path, ErrNone)
	}
	if string(magic[:]) == elf.ELFMAG {
		id, err := fromELF(f)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return id, nil
	}
	head := make([]byte, headLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	id, err := fromText(head[:n])
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// fromELF reads the ID from the note the Go linker writes on ELF: name
// "Go", type 4, the ID as its descriptor.
func fromELF(r io.ReaderAt) (string, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return "", err
	}
	sec := ef.Section(".note.go.buildid")
	if sec == nil {
		return "", ErrNone
	}
	note, err := sec.Data()
	if err != nil {
		return "", err
	}
	const hdr = 12
	if len(note) < hdr+4 {
		return "", ErrNone
	}
	order := ef.ByteOrder
	nameLen, descLen, typ := order.Uint32(note), order.Uint32(note[4:]), order.Uint32(note[8:])
	nameEnd := hdr + (uint64(nameLen)+3)&^3
	if typ != 4 || nameLen != 4 || string(note[hdr:hdr+4]) != "Go\x00\x00" || nameEnd+uint64(descLen) > uint64(len(note)) {
		return "", ErrNone
	}
	return string(note[nameEnd : nameEnd+uint64(descLen)]), nil
}

var (
	textStart = []byte("\xff Go build ID: \"")
	textEnd   = []byte("\"\n \xff")
)

// fromText finds the ID the linker writes at the start of the text on
// every other format (Mach-O, PE).
func fromText(head []byte) (string, error) {
	i := bytes.Index(head, textStart)
	if i < 0 {
		return "", ErrNone
	}
	rest := head[i+len(textStart):]
	j := bytes.Index(rest, textEnd)
	if j <= 0 {
		return "", ErrNone
	}
	return string(rest[:j]), nil
}
