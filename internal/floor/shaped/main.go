// Command shaped is the mcp-go server of the floors of cairn's own shape
// (docs/decisions.md D46): a minimal mcp-go server that answers
// server_ping itself and hands task_get to a constant-answer plugin
// process over a framed pipe (-plugin), as cairn's host hands a call to
// its core plugin. With -listen it owns a Unix socket and serves each
// connection a relay makes to it, as cairn's daemon does; without, it
// serves its own stdin/stdout, as `cairn serve --no-daemon` does.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	listen := flag.String("listen", "", "serve MCP on this Unix socket instead of stdin/stdout")
	pluginPath := flag.String("plugin", "", "the plugin program task_get is handed to")
	flag.Parse()
	var p *plugin
	if *pluginPath != "" {
		var err error
		if p, err = startPlugin(*pluginPath); err != nil {
			fail(err)
		}
		defer p.stop()
	}
	s := newServer(p)
	if *listen == "" {
		if err := server.ServeStdio(s); err != nil {
			fail(err)
		}
		return
	}
	if err := serveSocket(s, *listen); err != nil {
		fail(err)
	}
}

// serveSocket serves each connection to the socket in turn, until the
// listener fails. One at a time: mcp-go's stdio server keeps one session
// per process, and a floor measures one client.
func serveSocket(s *server.MCPServer, path string) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	defer l.Close()
	for {
		conn, err := l.Accept()
		if err != nil {
			return err
		}
		_ = server.NewStdioServer(s).Listen(context.Background(), conn, conn)
		_ = conn.Close()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor shaped:", err)
	os.Exit(1)
}
