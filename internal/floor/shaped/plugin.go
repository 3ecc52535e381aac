package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/cairn-mcp/cairn/internal/floor/frame"
)

// plugin is the child process calls are handed to, one frame out and one
// frame back per call; calls take turns on the pipe.
type plugin struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	mu  sync.Mutex
	out *bufio.Reader
	buf []byte
}

func startPlugin(path string) (*plugin, error) {
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &plugin{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

// call sends args and returns a copy of the answer.
func (p *plugin) call(args []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := frame.Write(p.in, args); err != nil {
		return nil, err
	}
	var err error
	if p.buf, err = frame.Read(p.out, p.buf); err != nil {
		return nil, err
	}
	return append([]byte(nil), p.buf...), nil
}

func (p *plugin) stop() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}
