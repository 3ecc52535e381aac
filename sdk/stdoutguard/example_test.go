package stdoutguard_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cairn-mcp/cairn/sdk/stdoutguard"
)

// The owner of the protocol writes its messages to Stdout; whatever else
// prints (a library's stray fmt.Println) goes to os.Stdout, which the
// import pointed at stderr.
func ExampleStdout() {
	proto := json.NewEncoder(stdoutguard.Stdout())
	_ = proto // the JSON-RPC or handshake writer of the process

	fmt.Println(stdoutguard.Stdout().Name(), stdoutguard.Stdout() != os.Stderr)
	// Output: /dev/stdout true
}
