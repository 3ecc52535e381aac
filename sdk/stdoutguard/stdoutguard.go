// Package stdoutguard keeps stdout for the one protocol that owns it.
//
// Importing it points os.Stdout at stderr during package initialisation and
// keeps the real stdout aside. A plugin's stdout carries the go-plugin
// handshake and the host's stdout carries MCP JSON-RPC; in both, a stray
// fmt.Println from any library would corrupt the stream. The owner of the
// protocol takes the real file with Stdout and everything else that prints
// lands on stderr, where logs belong.
package stdoutguard

import "os"

var real = os.Stdout

func init() {
	os.Stdout = os.Stderr
}

// Stdout returns the process's real standard output.
func Stdout() *os.File { return real }
