package stdio

import (
	"context"
	"errors"
	"io"
	"os"
)

// ServeStdio serves one MCP session over in and out, this process's stdio,
// until the client closes in or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if c, ok := in.(io.Closer); ok {
		// A read blocked on stdin does not see ctx: closing it ends the read.
		defer context.AfterFunc(ctx, func() { _ = c.Close() })()
	}
	err := s.Serve(ctx, in, out, opts)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed)) {
		return nil
	}
	return err
}
