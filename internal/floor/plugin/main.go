// Command plugin is the plugin of the floors of cairn's own shape
// (docs/decisions.md D46): a child process that reads framed calls on its
// stdin and answers each with one constant task, framed, on its stdout. It
// does no work a call could be spared, so a call through it costs only the
// pipe and the two processes.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/cairn-mcp/cairn/internal/floor/frame"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	var buf []byte
	for {
		var err error
		buf, err = frame.Read(in, buf)
		if err == io.EOF {
			return
		}
		if err == nil {
			err = frame.Write(out, answer)
		}
		if err == nil {
			err = out.Flush()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor plugin:", err)
			os.Exit(1)
		}
	}
}
