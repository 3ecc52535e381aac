// Command cairn-plugin-testkit serves the test plugin of package testkit.
// Its name and tool prefix come from TESTKIT_NAME so one binary can play
// several plugins; TESTKIT_STDOUT_NOISE=1 makes it print to stdout before
// serving, as a careless plugin would.
package main

import (
	"fmt"
	"os"

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
	sdk.Serve(testkit.New(name))
}
