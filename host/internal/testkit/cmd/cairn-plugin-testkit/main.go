// Command cairn-plugin-testkit serves the test plugin of package testkit.
// Its name and tool prefix come from TESTKIT_NAME so one binary can play
// several plugins; TESTKIT_STDOUT_NOISE=1 makes it print to stdout before
// serving, as a careless plugin would; TESTKIT_START_GATE holds it
// before its handshake until the file it names exists, as a plugin slow to
// start would be.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cairn-mcp/cairn/host/internal/testkit"
	"github.com/cairn-mcp/cairn/sdk"
)

func main() {
	name := os.Getenv("TESTKIT_NAME")
	if name == "" {
		name = "testkit"
	}
	if os.Getenv("TESTKIT_STDOUT_NOISE") == "1" {
		fmt.Println("hello from a noisy plugin")
	}
	if gate := os.Getenv("TESTKIT_START_GATE"); gate != "" {
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	sdk.Serve(testkit.New(name))
}
